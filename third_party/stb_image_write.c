// SPDX-License-Identifier: MIT
// stb_image_write, built without stdio: src/io/write_stb.c uses only
// stbi_write_bmp_to_func and stbi_write_tga_to_func, writing through a checked outfile.
// Compiled without our warning flags: this is third-party code.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
