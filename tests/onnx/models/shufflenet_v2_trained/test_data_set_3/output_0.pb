
Boutput_0J(Pï)À¿C<À2IaÀ++OÀ+U‚ÀCyî@YÑ#À;mó?¨ÝÞ¿ip?