// SPDX-License-Identifier: MIT
// --report FILE: one JSON object a line (JSON Lines) per input, written as each input
// finishes, from any thread. Each line is written whole by one write(2) under a mutex, with
// no buffering, so a batch that is killed leaves only whole lines. The fields, in order:
//   index     the input's position in the list, from 1
//   input     the input's path as given ("-" for stdin)
//   status    "ok", "failed" or "skipped"
//   error     the message (without "climg: "), or null
//   width, height, channels   the decoded image's, or null where unknown
//   outputs   [{"path", "bytes", "sha256"}, ...]: every file written, side outputs
//             included, sha256 in lowercase hex
//   device    the device the stages ran on, e.g. "NVIDIA H100 80GB HBM3 (NVIDIA CUDA)" or
//             "cpu"; with --devices "N: NAME (PLATFORM)", N its --list-devices number;
//             null when the input did not reach the stages
//   ms        {"decode", "stages", "encode", "total"}: milliseconds, 3 decimals
// Strings: '"' and '\' are escaped, control characters are written \n, \t, \r or \u00XX,
// valid UTF-8 passes through, and a byte that is not part of valid UTF-8 is written as
// \u00XX of its value (so a Latin-1 file name reads as the same characters).
#ifndef CLIMG_REPORT_H
#define CLIMG_REPORT_H

#include <stddef.h>
#include <stdint.h>

struct report_output {
	const char *path;
	uint64_t bytes;
	uint8_t sha256[32];
};

struct report_entry {
	long index;
	const char *input;
	const char *status; // "ok", "failed", "skipped"
	const char *error;  // NULL -> null
	int w, h, ch;       // 0 = unknown -> null
	const struct report_output *outputs;
	int noutputs;
	const char *device;                               // NULL -> null
	double decode_ms, stages_ms, encode_ms, total_ms; // not finite -> null
};

struct report;

// Opens path for writing ("-" = standard output). A file is created or truncated and
// written directly (not atomically: lines appear as inputs finish). NULL with err set.
struct report *report_open(const char *path);

// Writes e as one line. Thread-safe. -1 with err set; after a failed write every later
// call fails too.
int report_write(struct report *r, const struct report_entry *e);

// Closes the file and frees r. NULL-safe. -1 with err set when closing fails (the last
// lines may be lost) or an earlier write failed.
int report_close(struct report *r);

// The JSON string literal of s, quotes included, escaped as above: malloc'd, NULL with err
// set when out of memory. Exposed for the tests.
char *report_json_string(const char *s);

#endif
