# SPDX-License-Identifier: MIT
# climg - build with `make`, test with `make test`.
# Include and library paths for dependencies outside the system ones can be given as
# INCDIRS / LIBDIRS (space-separated directories), e.g. for unpacked .deb files:
#   make INCDIRS="/tmp/deps/usr/include" LIBDIRS="/tmp/deps/usr/lib/x86_64-linux-gnu"

VERSION   := 0.1.0
PREFIX    ?= /usr/local
CC        ?= cc
INCDIRS   ?=
LIBDIRS   ?=
STB_INCDIR ?= $(firstword $(wildcard $(addsuffix /stb,$(INCDIRS)) /usr/include/stb))

WERROR    ?= -Werror
WARN      := -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS    ?= -O2 -g
CPPFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L -DCLIMG_VERSION='"$(VERSION)"' \
             $(addprefix -isystem ,$(INCDIRS)) -isystem $(STB_INCDIR)
LDFLAGS   += $(addprefix -L,$(LIBDIRS)) $(addprefix -Wl$(comma)-rpath$(comma),$(LIBDIRS))
LDLIBS    += -lOpenCL -lpng -ljpeg -ldeflate -lz -lm -pthread
comma     := ,

SRC       := $(wildcard src/*.c src/io/*.c src/stages/*.c)
KERNELS   := $(sort $(wildcard kernels/*.cl))
OBJ       := $(SRC:%.c=build/%.o) build/kernels.o
TP_OBJ    := build/third_party/stb_image_bmp.o build/third_party/stb_image_write.o
LIB_OBJ   := $(filter-out build/src/main.o,$(OBJ)) $(TP_OBJ)

all: climg

climg: $(OBJ) $(TP_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

build/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c -o $@ $<

# Third-party code is compiled without our warning set (it is not ours to fix).
build/third_party/%.o: third_party/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -w -c -o $@ $<

# Kernels are embedded into the binary: build/kernels.c holds each kernels/*.cl as a string.
build/kernels.c: $(KERNELS) $(wildcard kernels/*.clh) tools/embed-kernels.sh
	@mkdir -p build
	sh tools/embed-kernels.sh $(KERNELS) > $@.tmp && mv $@.tmp $@

build/kernels.o: build/kernels.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -Isrc -c -o $@ $<

# ---- tests ----------------------------------------------------------------------------
TEST_BINS := tests/unit tests/imgtool tests/codec

tests/unit: build/tests/unit.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests/imgtool: build/tests/imgtool.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests/codec: build/tests/codec.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: climg $(TEST_BINS) tools/bench
	sh tests/run.sh

# ---- benchmarks (docs/BENCHMARKS.md) --------------------------------------------------------
# `make bench`: the device's kernels, transfers and whole commands on 8K images, on
# $CLIMG_DEVICE (or climg's default device); options for tools/bench go in BENCH_FLAGS,
# e.g. make bench BENCH_FLAGS="--verify".
BENCH_FLAGS ?=

tools/bench: build/tools/bench.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench: climg tools/bench
	@tools/bench $(BENCH_FLAGS)

# End-to-end timings of whole jobs against vips, ImageMagick and OpenCV where installed
# (tools/bench-e2e.sh; BENCH_RUNS, BENCH_TOOLS, BENCH_JOBS, BENCH_SIZE, BENCH_DIR).
bench-e2e: climg tests/imgtool
	sh tools/bench-e2e.sh

# Regenerates the committed sample images in testdata/.
testdata: tests/imgtool
	sh tests/make-testdata.sh

install: climg
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 climg $(DESTDIR)$(PREFIX)/bin/climg
	install -m 644 man/climg.1 $(DESTDIR)$(PREFIX)/share/man/man1/climg.1

clean:
	rm -rf build climg $(TEST_BINS) tools/bench

.PHONY: all test bench bench-e2e testdata install clean
-include $(OBJ:.o=.d) build/tests/unit.d build/tests/imgtool.d build/tests/codec.d build/tools/bench.d
