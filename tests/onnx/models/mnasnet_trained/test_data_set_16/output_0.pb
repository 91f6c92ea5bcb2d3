
Boutput_0J(TRÀX“QÀMF%ÀˆPÀrï!ÀšÍ[?ø&À\M@v¸¿œtÂ@