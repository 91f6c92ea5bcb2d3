
Boutput_0J(ëãsÀ¿a\À ¶†ÀÍ|JÀ©aÀ"et¾bU"Àw®[@GÀ9*A