
Boutput_0J(lDŠ@Êuk¿V<:¿ïö?O«Ì¿ì3IÀUl@b“Àsî½»À