
Boutput_0J(c¯zÀË¤’Àú"mÀ”G‚ÀcÀ©¶z¾{qÀœR@V}Ö¿XìA