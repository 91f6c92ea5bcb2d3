
Boutput_0J(Nl?ÀFaVÀ~®UÀºÀ
MKÀ?Ž	?—À¡,‚?K9Ž¿ë%Ç@