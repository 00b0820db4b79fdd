// SPDX-License-Identifier: MIT
// stb_image, built for BMP input only, from memory only (src/io/bmp.c uses it).
// Compiled without our warning flags: this is third-party code.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_FAILURE_USERMSG
#define STBI_MAX_DIMENSIONS 65535
#include <stb_image.h>
