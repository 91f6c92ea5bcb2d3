
Boutput_0J(•¬¡¾¹±
¿dþKÀºÑÏ@
À‘?†p€Àbç¿tà¿‰LÀAFOÀ