
Boutput_0J(<“x@;´Àhs$½(vw?òÊ»¿×OZÀÒ	m@…ä_ÀşV¿C|À