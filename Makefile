# SPDX-License-Identifier: MIT
# climg - build with `make`, test with `make test`.
# Include and library paths for dependencies outside the system ones can be given as
# INCDIRS / LIBDIRS (space-separated directories), e.g. for unpacked .deb files:
#   make INCDIRS="/tmp/deps/usr/include" LIBDIRS="/tmp/deps/usr/lib/x86_64-linux-gnu"

# The release version (debian/changelog's must match). `climg --version` prints
# CLIMG_VERSION: in a git checkout, `git describe` of the latest tag vX.Y.Z without its v
# ("0.2.0", "0.2.0-3-gabc1234-dirty"), or where no tag is reachable VERSION and the commit
# ("0.1.0-gabc1234-dirty"); elsewhere (a tarball, the Debian package's build, no git)
# VERSION. GIT_DESCRIBE= on the command line uses VERSION in a checkout too.
VERSION   := 0.1.0
GIT_DESCRIBE ?= $(shell test -e .git && \
                  git describe --tags --always --dirty --match 'v[0-9]*' 2>/dev/null)
CLIMG_VERSION := $(strip $(if $(filter v%,$(GIT_DESCRIBE)),$(GIT_DESCRIBE:v%=%),\
                      $(VERSION)$(GIT_DESCRIBE:%=-g%)))
PREFIX    ?= /usr/local
CC        ?= cc
INCDIRS   ?=
LIBDIRS   ?=
STB_INCDIR ?= $(firstword $(wildcard $(addsuffix /stb,$(INCDIRS)) /usr/include/stb))

WERROR    ?= -Werror
WARN      := -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS    ?= -O2 -g
CPPFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L \
             $(addprefix -isystem ,$(INCDIRS)) -isystem $(STB_INCDIR)
LDFLAGS   += $(addprefix -L,$(LIBDIRS)) $(addprefix -Wl$(comma)-rpath$(comma),$(LIBDIRS))
LDLIBS    += -lOpenCL -lpng -ljpeg -ldeflate -lz -lnettle -lm -pthread
comma     := ,

# B is the object directory and OUT the prefix of the binaries: `make check-asan` builds the
# same sources into build-asan/ (binaries build-asan/climg, build-asan/tests/...).
# Only a command-line value counts: an environment variable called B or OUT (common names)
# must not move the build.
B         := $(if $(filter command line,$(origin B)),$(B),build)
OUT       := $(if $(filter command line,$(origin OUT)),$(OUT),)

SRC       := $(wildcard src/*.c src/io/*.c src/ocl/*.c src/stages/*.c)
KERNELS   := $(sort $(wildcard kernels/*.cl))
OBJ       := $(SRC:%.c=$(B)/%.o) $(B)/kernels.o
TP_OBJ    := $(B)/third_party/stb_image_bmp.o $(B)/third_party/stb_image_write.o
LIB_OBJ   := $(filter-out $(B)/src/main.o,$(OBJ)) $(TP_OBJ)

all: $(OUT)climg

$(OUT)climg: $(OBJ) $(TP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Only src/version.c sees CLIMG_VERSION; $(B)/version.txt changes (and so rebuilds it) only
# when the version does.
$(B)/src/version.o: CPPFLAGS += -DCLIMG_VERSION='"$(CLIMG_VERSION)"'
$(B)/src/version.o: $(B)/version.txt
$(B)/version.txt: FORCE
	@mkdir -p $(B)
	@echo '$(CLIMG_VERSION)' | cmp -s - $@ || echo '$(CLIMG_VERSION)' >$@

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c -o $@ $<

# Third-party code is compiled without our warning set (it is not ours to fix).
$(B)/third_party/%.o: third_party/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -w -c -o $@ $<

# Kernels are embedded into the binary: build/kernels.c holds each kernels/*.cl as a string.
$(B)/kernels.c: $(KERNELS) $(wildcard kernels/*.clh) tools/embed-kernels.sh
	@mkdir -p $(B)
	sh tools/embed-kernels.sh $(KERNELS) > $@.tmp && mv $@.tmp $@

$(B)/kernels.o: $(B)/kernels.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -Isrc -c -o $@ $<

# ---- tests ----------------------------------------------------------------------------
# tests/fuzz/replay.c runs each fuzz target's saved inputs (tests/fuzz/regress/TARGET/)
# without libFuzzer, so the suite replays them with gcc too.
FUZZ_TARGETS := chain decode pipeline
REPLAY_BINS  := $(FUZZ_TARGETS:%=$(OUT)tests/fuzz/replay-%)
TEST_BINS    := $(OUT)tests/unit $(OUT)tests/imgtool $(OUT)tests/metatool $(OUT)tests/codec \
                $(OUT)tests/kernels $(OUT)tests/jobs $(OUT)tests/cost $(OUT)tests/failwrite.so \
                $(OUT)tests/fakeicd.so \
                $(REPLAY_BINS)

$(OUT)tests/unit: $(B)/tests/unit.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The batch modules: input lists, templates, the report, progress (tests/t-jobs.sh).
$(OUT)tests/jobs: $(B)/tests/jobs.o $(B)/tests/jobs_out.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The automatic choice's model and the chain split between the paths (tests/t-auto.sh).
$(OUT)tests/cost: $(B)/tests/cost.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)tests/imgtool: $(B)/tests/imgtool.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Image metadata made and read back on its own, with zlib alone (tests/t-metadata.sh,
# tests/t-autoorient.sh).
$(OUT)tests/metatool: $(B)/tests/metatool.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lz

$(OUT)tests/fuzz/replay-%: $(B)/tests/fuzz/fuzz-%.o $(B)/tests/fuzz/replay.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# An LD_PRELOAD shim that makes write(2) fail (disk full) for tests/t-hostile.sh. Not
# sanitized: it runs inside sanitized binaries too.
$(OUT)tests/failwrite.so: tests/failwrite.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -fPIC -shared -o $@ $< -ldl

# A fake OpenCL driver with one GPU that cannot create a context (tests/t-hostile.sh).
$(OUT)tests/fakeicd.so: tests/fakeicd.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -g $(WARN) -fPIC -shared -o $@ $<

$(OUT)tests/codec: $(B)/tests/codec.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Both kernel families of the stages that have two, against the CPU path (tests/t-kernels.sh).
$(OUT)tests/kernels: $(B)/tests/kernels.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: $(OUT)climg $(TEST_BINS) $(OUT)tools/bench
	CLIMG=$(OUT)climg IMGTOOL=$(OUT)tests/imgtool METATOOL=$(OUT)tests/metatool \
	UNIT=$(OUT)tests/unit CODEC=$(OUT)tests/codec KERNELS=$(OUT)tests/kernels BENCH=$(OUT)tools/bench \
	JOBSTEST=$(OUT)tests/jobs COSTTEST=$(OUT)tests/cost FUZZ_REPLAY=$(OUT)tests/fuzz \
	FAILWRITE=$(OUT)tests/failwrite.so FAKEICD=$(OUT)tests/fakeicd.so JOBS=$${JOBS:-$$(nproc)} sh tests/run.sh

# ---- benchmarks (docs/BENCHMARKS.md) --------------------------------------------------------
# `make bench`: the device's kernels, transfers and whole commands on 8K images, on
# $CLIMG_DEVICE (or climg's default device); options for tools/bench go in BENCH_FLAGS,
# e.g. make bench BENCH_FLAGS="--verify".
BENCH_FLAGS ?=

$(OUT)tools/bench: $(B)/tools/bench.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench: climg tools/bench
	@tools/bench $(BENCH_FLAGS)

# End-to-end timings of whole jobs against vips, ImageMagick and OpenCV where installed
# (tools/bench-e2e.sh; BENCH_RUNS, BENCH_TOOLS, BENCH_JOBS, BENCH_SIZE, BENCH_DIR), then
# climg compare against its peers (bench-compare).
bench-e2e: climg tests/imgtool
	sh tools/bench-e2e.sh
	sh tools/bench-compare.sh

# Batch throughput against one process per file, shell loops and peers where installed
# (tools/bench-batch.sh; BENCH_SMALL, BENCH_LARGE, BENCH_RUNS, BENCH_JOBS, BENCH_CHAINS,
# BENCH_LOOP, BENCH_DIR).
bench-batch: climg tests/imgtool
	sh tools/bench-batch.sh

# The automatic choice against --cpu and --device, whole commands over image sizes, chains,
# formats, one image and a batch (tools/bench-auto.sh; BENCH_RUNS, BENCH_ROWS, BENCH_COLD,
# BENCH_DIR); the report on stdout.
bench-auto: climg tests/imgtool
	@sh tools/bench-auto.sh

# `make bench-compare`: climg compare against odiff and ImageMagick's compare, where they are
# installed, on two 20 MP PNGs (tools/bench-compare.sh; BENCH_RUNS, BENCH_DIR).
bench-compare: climg tests/imgtool
	sh tools/bench-compare.sh

# Regenerates the committed sample images in testdata/.
testdata: tests/imgtool
	sh tests/make-testdata.sh

# ---- sanitizers and fuzzing ------------------------------------------------------------
# check-asan: the whole suite with clang's AddressSanitizer and UndefinedBehaviorSanitizer
# (float-cast-overflow included) in build-asan/. Every report fails it: reports go to
# files under build-asan/reports/, which must stay empty. Leaks inside the OpenCL driver
# (not ours) are suppressed by tests/lsan.supp. use_sigaltstack=0: PoCL's LLVM replaces the
# alternate signal stack of the thread that first opens it with one of its own, which
# AddressSanitizer then fails to unmap when that thread (the run layer's device opener)
# exits; the sanitizer's own signal stack is not needed for the reports (UBSAN_OPTIONS too:
# it sets the common flags again). intercept_tls_get_addr=0: clang 14's record of dynamic
# TLS goes wrong once PoCL has loaded a kernel's library, and LeakSanitizer's tracer then
# crashes reading it at exit (after a device fault, every time); without the record the
# dynamic TLS blocks are plain heap blocks, reached from the threads' static TLS.
# tests/asan-run.sh
# runs the suite, once more only when LeakSanitizer's tracer itself crashed and nothing else
# was reported.
SAN_CC     ?= clang
SAN_FLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow \
              -fno-sanitize-recover=all
SAN_ENV     = ASAN_OPTIONS=log_path=$(CURDIR)/build-asan/reports/asan:detect_leaks=1:use_sigaltstack=0:intercept_tls_get_addr=0 \
              UBSAN_OPTIONS=log_path=$(CURDIR)/build-asan/reports/ubsan:print_stacktrace=1:use_sigaltstack=0:intercept_tls_get_addr=0 \
              LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
              CLIMG_SANITIZED=1

check-asan:
	$(MAKE) B=build-asan OUT=build-asan/ CC=$(SAN_CC) CFLAGS="$(SAN_FLAGS)" \
		build-asan/climg $(TEST_BINS:$(OUT)%=build-asan/%) build-asan/tools/bench
	$(SAN_ENV) JOBS=2 CLIMG=build-asan/climg IMGTOOL=build-asan/tests/imgtool \
		METATOOL=build-asan/tests/metatool \
		UNIT=build-asan/tests/unit FUZZ_REPLAY=build-asan/tests/fuzz \
		CODEC=build-asan/tests/codec KERNELS=build-asan/tests/kernels \
		JOBSTEST=build-asan/tests/jobs COSTTEST=build-asan/tests/cost BENCH=build-asan/tools/bench \
		FAILWRITE=build-asan/tests/failwrite.so FAKEICD=build-asan/tests/fakeicd.so \
		sh tests/asan-run.sh

# check-valgrind: the CPU path under valgrind memcheck (tests/valgrind.sh): no errors, no
# definite leaks.
check-valgrind: $(OUT)climg $(OUT)tests/imgtool $(OUT)tests/metatool $(REPLAY_BINS)
	CLIMG=$(OUT)climg IMGTOOL=$(OUT)tests/imgtool METATOOL=$(OUT)tests/metatool \
		FUZZ_REPLAY=$(OUT)tests/fuzz sh tests/valgrind.sh

# fuzz: builds the libFuzzer targets (tests/fuzz/fuzz-*.c) with clang into build-fuzz/ and
# runs each for FUZZ_SECONDS on a corpus seeded by tests/fuzz/make-seeds.sh. New crashes
# are left as build-fuzz/crash-TARGET-*; a fixed one goes into tests/fuzz/regress/TARGET/.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fsanitize=float-cast-overflow -fno-sanitize-recover=all

build-fuzz/fuzz-%: tests/fuzz/fuzz-%.c FORCE
	$(MAKE) B=build-fuzz OUT=build-fuzz/ CC=$(SAN_CC) CFLAGS="$(FUZZ_FLAGS)" \
		lib-objs build-fuzz/tests/fuzz/fuzz-$*.o
	$(SAN_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ build-fuzz/tests/fuzz/fuzz-$*.o \
		$(patsubst $(B)/%,build-fuzz/%,$(LIB_OBJ)) $(LDLIBS)

lib-objs: $(LIB_OBJ)

fuzz: $(FUZZ_TARGETS:%=build-fuzz/fuzz-%) $(OUT)climg $(OUT)tests/imgtool $(OUT)tests/metatool
	CLIMG=$(abspath $(OUT)climg) IMGTOOL=$(OUT)tests/imgtool METATOOL=$(OUT)tests/metatool \
		sh tests/fuzz/make-seeds.sh build-fuzz/seeds
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/corpus/$$t; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 build-fuzz/fuzz-$$t \
			-max_total_time=$(FUZZ_SECONDS) -timeout=25 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$t- \
			-dict=build-fuzz/seeds/$$t.dict \
			build-fuzz/corpus/$$t build-fuzz/seeds/$$t \
			$$( [ -d tests/fuzz/regress/$$t ] && echo tests/fuzz/regress/$$t ) \
			>build-fuzz/$$t.log 2>&1 || { tail -n 40 build-fuzz/$$t.log; exit 1; }; \
		grep -E '^stat::number_of_executed_runs|^Done' build-fuzz/$$t.log; \
	done

FORCE:

# check-fresh: the README's set-up line and `make test`, run exactly as written there, as
# root in a chroot of a fresh minimal Debian 12 (debootstrap --variant=minbase plus gcc and
# make) on the committed HEAD; tools/check-fresh.sh. Needs root, debootstrap and the Debian
# mirror; CHECK_FRESH_CACHE=DIR reuses the base root and packages an earlier run downloaded.
check-fresh:
	sh tools/check-fresh.sh

.PHONY: check-fresh

# check-cluster: the man page's recipes for many machines, run through real engines on this
# one machine: a one-node Slurm cluster (munged, slurmctld, slurmd on loopback) runs a job
# array of shards, GNU parallel runs shards over ssh to an sshd on loopback; a worker of each
# is killed mid-shard and the rerun must complete the set, equal to an unsharded run.
# Root, and the packages of `sh tools/install-deps.sh --dev`; tools/check-cluster.sh.
check-cluster: $(OUT)climg $(OUT)tests/imgtool
	CLIMG=$(OUT)climg IMGTOOL=$(OUT)tests/imgtool sh tools/check-cluster.sh

.PHONY: check-cluster

# ---- install (GNU conventions: DESTDIR, prefix and the directory variables) -------------------
# `make install PREFIX=/usr DESTDIR=/tmp/stage` installs the binary, the man page and the bash
# completion under /tmp/stage/usr; `make uninstall` with the same variables removes them.
# PREFIX is prefix's older name: either may be given.
prefix      ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir      ?= $(exec_prefix)/bin
datarootdir ?= $(prefix)/share
mandir      ?= $(datarootdir)/man
man1dir     ?= $(mandir)/man1
bashcompdir ?= $(datarootdir)/bash-completion/completions
INSTALL         ?= install
INSTALL_PROGRAM ?= $(INSTALL)
INSTALL_DATA    ?= $(INSTALL) -m 644

install: $(OUT)climg
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(bashcompdir)
	$(INSTALL_PROGRAM) $(OUT)climg $(DESTDIR)$(bindir)/climg
	$(INSTALL_DATA) man/climg.1 $(DESTDIR)$(man1dir)/climg.1
	$(INSTALL_DATA) completion/climg.bash $(DESTDIR)$(bashcompdir)/climg

uninstall:
	rm -f $(DESTDIR)$(bindir)/climg $(DESTDIR)$(man1dir)/climg.1 $(DESTDIR)$(bashcompdir)/climg

# ---- the Debian package ------------------------------------------------------------------------
# `make deb`: build-deb/climg_$(VERSION)_ARCH.deb (with its -dbgsym package, .buildinfo and
# .changes), which dpkg-buildpackage builds from a copy of the source (the files git tracks
# and new ones it does not ignore; everything, without git) in build-deb/climg-$(VERSION)/,
# then lintian's verdict: no error, no warning. DEB_BUILD_OPTIONS=nocheck skips the tests
# that the package's build runs (debian/rules).
# `make check-deb`: installs that package with apt into a fresh Debian 12 root and runs it
# there (tools/check-deb.sh; root, debootstrap, network).
DEB_DIR := build-deb/climg-$(VERSION)

deb:
	@for t in dpkg-buildpackage dh fakeroot lintian; do command -v $$t >/dev/null || { \
		echo "make deb: $$t is missing; as root:" \
			"apt-get install dpkg-dev debhelper fakeroot lintian" >&2; exit 1; }; done
	rm -rf build-deb
	mkdir -p $(DEB_DIR)
	if [ -e .git ]; then git ls-files -z -co --exclude-standard; \
	else find . \( -name 'build*' -prune \) -o \( -type f -print0 \); fi | \
		tar --null -T - -cf - | tar -xf - -C $(DEB_DIR)
	cd $(DEB_DIR) && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning build-deb/climg_$(VERSION)_*.deb
	@ls build-deb/*.deb

check-deb:
	sh tools/check-deb.sh build-deb/climg_$(VERSION)_*.deb

clean:
	rm -rf build build-asan build-fuzz build-deb climg tests/unit tests/imgtool tests/codec \
		tests/kernels tests/jobs tests/cost tools/bench \
		tests/failwrite.so tests/fakeicd.so tests/fuzz/replay-*

# Keep intermediate objects (the fuzz replay objects come through a pattern chain): make would
# delete them after `make test`, printing an rm line after the suite's closing summary.
.SECONDARY:

.PHONY: all test bench bench-e2e bench-batch bench-auto bench-compare testdata install uninstall deb check-deb clean \
	check-asan check-valgrind fuzz lib-objs FORCE
-include $(OBJ:.o=.d) $(B)/tests/unit.d $(B)/tests/imgtool.d $(B)/tests/codec.d \
	$(B)/tests/kernels.d $(B)/tests/jobs.d $(B)/tests/jobs_out.d $(B)/tests/cost.d $(B)/tools/bench.d \
	$(B)/tests/fuzz/*.d
