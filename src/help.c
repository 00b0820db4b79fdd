// SPDX-License-Identifier: MIT
// --help is a list of entries, each flowed into HELP_COLUMNS columns when printed: a
// paragraph from column 0, or an item whose tag starts at column 2 and whose text starts
// at column TEXT_COL (on the tag's line where the tag leaves room, else on the next).
// The stages' entries are made from the stages' files.
#include "help.h"

#include <stdbool.h>
#include <string.h>

#define TEXT_COL 25

// One entry of the help: a paragraph (tag NULL), a line printed as it is (text NULL), or an
// item. The list ends with an entry whose tag and text are both NULL.
struct help_entry {
	const char *tag, *text;
};

// compare's synopsis, in --help and compare --help
#define COMPARE_USAGE "climg compare A B [COMPARE OPTIONS]   (two images or two directories)"

#define PARA(t) { NULL, (t) }
#define LINE(l) { (l), NULL }
#define END { NULL, NULL }

static const struct help_entry head[] = {
	LINE("usage: climg [OPTIONS] INPUT... STAGE... -o OUTPUT"),
	LINE("       climg [OPTIONS] --files-from LIST STAGE... -o TEMPLATE"),
	LINE("       " COMPARE_USAGE),
	LINE("       climg help STAGE                      (a stage's options and formula)"),
	LINE(""),
	PARA("Runs images through a chain of stages on an OpenCL device or the CPU path, each "
	     "job (and each stage) where it is estimated to finish first; the bytes are the "
	     "same. Each "
	     "INPUT is a PNG, JPEG, BMP, PGM or PPM file, recognised by content ('-' reads "
	     "stdin), or a directory: the image files under it, recursively, in sorted order. "
	     "The inputs come first: they are the words before the first that names a stage "
	     "(write a file named like a stage ./grey). Each STAGE is one argument, NAME or "
	     "NAME:ARG[:ARG...]. Several inputs make a batch: one process, the device opened "
	     "once, images in parallel on every core; -o is then a template (see Batches "
	     "below). A run must write something: -o, --expect, a histogram's file, --verify, "
	     "--time or --report; a chain without any of them is a usage error."),
	LINE(""),
	LINE("Options (anywhere on the line):"),
	{ "-o, --output FILE",
	  "write the result to FILE ('-' = stdout, never a terminal without --force); format "
	  "by extension: .png .jpg .jpeg .bmp .tga .pgm (1 channel) .ppm (3 channels). In a "
	  "batch a template: %n name, %e extension, %d directory, %i number, %% a %" },
	{ "    --format FMT",
	  "output format, overriding the extension (png jpeg bmp tga pgm ppm); stdout and "
	  "special files default to png" },
	{ "-d, --device SPEC",
	  "run on this OpenCL device: gpu, cpu, a number from --list-devices, or part of the "
	  "device name (default: $CLIMG_DEVICE, else the automatic choice: the first GPU, "
	  "else the first device, for the stages where it pays, the plain-C path for the "
	  "rest)" },
	{ "    --cpu", "use the plain-C reference path only, no OpenCL" },
	{ "    --verify",
	  "run OpenCL and the CPU path, compare after every stage (and the histogram counts "
	  "and stats sums at the end); one line on stderr says when they were identical" },
	{ "    --quality N",
	  "JPEG quality 1-100 (default 90); a warning where no output is JPEG" },
	{ "    --png-level N",
	  "PNG compression 0 (none) to 9 (smallest, slow), default 6; a warning where no "
	  "output is PNG" },
	{ "    --strip",
	  "write no metadata: PNG and JPEG output otherwise keep the input's ICC profile and "
	  "Exif block (orientation 1 after autoorient)" },
	{ "    --max-pixels N",
	  "refuse inputs and stage outputs of more than N pixels (default 268435456)" },
	{ "    --max-input-bytes N", "refuse inputs larger than N bytes (default 1073741824)" },
	{ "    --time[=json]",
	  "print the time of each phase (open, which runs alongside decode; decode and its "
	  "strips, copy-in, build, upload, every stage and where it ran, download and where "
	  "it went, encode, total) and why the stages ran where they did, to stderr, as text "
	  "or JSON" },
	{ "    --no-cache",
	  "compile the kernels from source: neither read nor write the program binary cache "
	  "($CLIMG_CACHE_DIR, else $XDG_CACHE_HOME/climg, else ~/.cache/climg)" },
	{ "    --expect GOLDEN",
	  "compare the result with the image GOLDEN (in a batch a template, as -o) instead of "
	  "writing it (with -o: as well); the metrics on stderr as climg compare prints them, "
	  "exit 1 when it differs; --tolerance, --allow, --ignore as there; compared where "
	  "the chain ran (device or CPU path)" },
	{ "-f, --force", "write an image to standard output even when it is a terminal" },
	{ "-q, --quiet", "no warnings, no progress line, no --verify line" },
	LINE(""),
	LINE("Batches:"),
	{ "-j, --jobs N", "images in flight at most (default: one per core)" },
	{ "    --files-from LIST", "read the inputs from LIST, one path a line ('-' = stdin)" },
	{ "-0, --null", "the paths in LIST end with NUL bytes (find -print0)" },
	{ "    --skip-existing", "skip an input whose every output exists" },
	{ "    --shard K/N", "take only the K-th of N shares of the input list" },
	{ "    --fail-fast", "start no more images after the first failure" },
	{ "    --report FILE",
	  "one JSON line per input ('-' = stdout): status, sizes, outputs with their SHA-256, "
	  "device, times" },
	{ "    --progress", "draw the progress line even when stderr is no terminal" },
	{ "    --devices LIST",
	  "spread the batch over devices: all (every device, and the CPU path when the "
	  "devices are the wait), or numbers from --list-devices, or parts of names, "
	  "comma-separated (also $CLIMG_DEVICES); excludes --device and --cpu" },
	LINE(""),
	LINE("Information:"),
	{ "    --list-devices", "list OpenCL devices (the default one marked) and exit" },
	{ "    --list-stages", "list the stages and exit" },
	{ "-h, --help",
	  "this help; after a stage (climg rotate --help), that stage's help; after compare, "
	  "compare's" },
	{ "    --version", "print the version" },
	LINE(""),
	END,
};

// `climg compare`'s options and output, also printed alone by `climg compare --help`.
static const struct help_entry compare[] = {
	LINE("Comparing (climg compare A B; see climg(1), COMPARE):"),
	{ "    --tolerance N",
	  "a pixel differs when a channel differs by more than N (0-255, default 0)" },
	{ "    --allow N|P%",
	  "the images are the same when at most N pixels (or P% of those compared) differ "
	  "(default 0)" },
	{ "    --ignore X,Y,W,H", "leave the W x H pixels at (X, Y) out (repeatable)" },
	{ "    --diff FILE",
	  "write a picture of the differences: A in light grey, each differing pixel red, "
	  "darker for smaller differences" },
	{ "    --json", "the metrics as one JSON object (a line per pair)" },
	{ "-d, --device SPEC",
	  "compare on this OpenCL device (else on the CPU path, unless $CLIMG_DEVICE names "
	  "one)" },
	{ "    --cpu", "compare on the CPU path, whatever $CLIMG_DEVICE says" },
	{ "    --verify",
	  "compare on the device and on the CPU path, their integers compared" },
	{ "-q, --quiet", "print no warnings" },
	PARA("compare prints one line: same|differ, size, channels, compared, differing (count, "
	     "percent), the largest difference per channel and where, mae, rmse, psnr. "
	     "Directories: the images with the same relative path, those on one side only, and "
	     "a summary. Exit status 0 same, 1 differ (sizes and channel counts too), 2 usage, "
	     "an unreadable file or a failing named device, 3 a --verify difference."),
	END,
};

static const struct help_entry stages[] = {
	LINE(""),
	LINE("Stages (climg help STAGE: the options, formula, defaults and an example):"),
	END,
};

static const struct help_entry tail[] = {
	LINE(""),
	LINE("Limits (each refused with a message that names it):"),
	{ "image size",
	  "65535 pixels a side and --max-pixels in area, for the input (checked from its "
	  "header) and every stage's output (planned before anything is allocated)" },
	{ "input size", "--max-input-bytes, for files, stdin, FIFOs and devices alike" },
	{ "memory",
	  "the chain's images (the input and two of its largest size) must fit the machine's "
	  "memory and ulimit -v, checked before decoding" },
	{ "chain", "at most 10000 stages" },
	{ "progressive JPEG", "at most 100 scans" },
	{ "convolve",
	  "radius at most 1000; a kernel that is not separable at most 2^40 multiply-adds per "
	  "image" },
	PARA("Truncated or corrupt images are refused; bytes after the end of an image are "
	     "ignored."),
	LINE(""),
	PARA("Exit status: 0 success, 1 run-time failure (in a batch: one or more inputs "
	     "failed), 2 usage error, 3 --verify found a difference. See climg(1) for "
	     "details."),
	END,
};

// Prints text flowed from column col to HELP_COLUMNS, the first line starting at column
// at (at <= col: spaces up to col first; at > col: a new line first). Words longer than
// a line stand alone on theirs.
static void flow(FILE *out, const char *text, int col, int at)
{
	const char *p = text;
	int x = at;
	if (at > col) {
		fputc('\n', out);
		x = 0;
	}
	for (; x < col; x++)
		fputc(' ', out);
	bool first = true;
	while (*p) {
		size_t len = strcspn(p, " ");
		if (!first && x + 1 + (int)len > HELP_COLUMNS) {
			fputc('\n', out);
			for (x = 0; x < col; x++)
				fputc(' ', out);
			first = true;
		}
		if (!first) {
			fputc(' ', out);
			x++;
		}
		fwrite(p, 1, len, out);
		x += (int)len;
		first = false;
		p += len;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

// An item: tag from column indent, text from TEXT_COL, on the tag's line where at least
// one space is left between them.
static void item(FILE *out, int indent, const char *tag, const char *text)
{
	int w = fprintf(out, "%*s%s", indent, "", tag);
	flow(out, text, TEXT_COL, w + 1 <= TEXT_COL ? w : TEXT_COL + 1);
}

static void entries(FILE *out, const struct help_entry *e)
{
	for (; e->tag || e->text; e++) {
		if (!e->text)
			fprintf(out, "%s\n", e->tag);
		else if (!e->tag)
			flow(out, e->text, 0, 0);
		else
			item(out, 2, e->tag, e->text);
	}
}

void help_print(FILE *out)
{
	entries(out, head);
	entries(out, compare);
	entries(out, stages);
	for (int i = 0; stage_list[i]; i++)
		item(out, 2, stage_list[i]->usage, stage_list[i]->summary);
	entries(out, tail);
}

void help_compare(FILE *out)
{
	fputs("usage: " COMPARE_USAGE "\n\n", out);
	entries(out, compare);
}

void help_list_stages(FILE *out)
{
	for (int i = 0; stage_list[i]; i++)
		item(out, 0, stage_list[i]->usage, stage_list[i]->summary);
}

void help_stage(FILE *out, const struct stage_ops *s)
{
	fprintf(out, "%s\n", s->usage);
	flow(out, s->summary, 2, 0);
	if (s->help)
		fprintf(out, "\n%s", s->help);
}
