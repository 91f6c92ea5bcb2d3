
Boutput_0J(TT[¿wú¿5K@9¤H¿
Š@â‡ÀZ¶q@QHŒÀğÛd¿A‚À