// SPDX-License-Identifier: MIT
// The inputs of a batch and the names of their outputs: command-line words and
// --files-from lists become a list of inputs (directories walked), --shard keeps one share
// of it, and -o templates (%n %e %d %i %%) expand to each input's output paths, checked for
// collisions before any work. No OpenCL, no pixels. src/jobs.c builds the list,
// src/jobs_names.c names the outputs.
#ifndef CLIMG_JOBS_H
#define CLIMG_JOBS_H

#include <stdbool.h>
#include <stddef.h>

// One input. Every string is owned by the list (malloc'd) and never NULL.
struct job_input {
	char *path; // the path to open ("-" = stdin)
	char *dir;  // %d: for a file found under a directory argument, its directory relative to
	            // that argument ("" at its top, "a/b" below); for a file named directly, its
	            // directory as written ("" for "in.jpg", "photos" for "photos/in.jpg", "/"
	            // for "/x.png", "." for "./in.jpg"); "" for stdin
	char *name; // %n: the file name without its last extension ("in.tar" for "in.tar.jpg");
	            // leading dots belong to the name (".x" is name ".x", ext ""); "stdin" for "-"
	char *ext;  // %e: the extension without the dot, as written ("JPG"); "" when none
	long index; // %i: the position in the whole list, from 1 (kept through sharding)
};

// A list starts as {0}; jobs_free empties it.
struct job_list {
	struct job_input *v;
	size_t n;
	size_t cap; // entries allocated in v
};

// Whether a file found in a directory counts as an image: its extension, any case, is one
// of png jpg jpeg jpe bmp pgm ppm pnm.
bool jobs_is_image_name(const char *name);

// Appends the inputs named on the command line, in order:
// - "-": standard input (at most once in the whole list);
// - a directory (or a symlink to one): the image files under it (jobs_is_image_name),
//   recursively, ordered by their path relative to the directory compared byte-wise
//   (strcmp; what `find DIR -type f | LC_ALL=C sort` gives, so "a.b/x" comes before "a/x").
//   Hidden files and directories (a name starting with '.') are skipped; a symlink to a
//   file is followed (it counts when its own name is an image name), a symlink to a
//   directory is not (so there are no loops); FIFOs, devices, sockets and broken symlinks
//   are skipped. A directory that cannot be read is an error naming it;
// - anything else: one input, whatever its name, even if it does not exist (opening it is
//   that input's failure, reported with the others).
// -1 with err set.
int jobs_add_args(struct job_list *l, int n, char *const *args);

// Appends the paths listed in list_path ("-" = stdin): one per line ('\n'; a '\r' before
// it is part of the path; empty lines skipped; the last line needs no '\n') or, with nul,
// NUL-separated (as find -print0 writes). Each path is an input as in jobs_add_args (a
// listed directory is walked the same way; a listed "-" is stdin, refused when the list
// itself is stdin). A NUL byte in a newline-separated list is an error. -1 with err set.
int jobs_add_list(struct job_list *l, const char *list_path, bool nul);

// Keeps only shard k of n (1 <= k <= n): the inputs whose (index - 1) % n == k - 1, so the
// n shards are disjoint, cover the list, and differ in size by at most one. Indexes are kept.
void jobs_shard(struct job_list *l, int k, int n);

// Parses "K/N" (decimal, 1 <= K <= N <= INT_MAX) for --shard; -1 with err set
// ("--shard must be K/N with 1 <= K <= N, not 'x'").
int jobs_parse_shard(const char *s, int *k, int *n);

// Whether tmpl has a placeholder (%n %e %d %i; "%%" is not one).
bool jobs_template_varies(const char *tmpl);

// Checks tmpl for the -o option: only %n %e %d %i %%; -1 with err set naming the bad one
// ("-o: unknown placeholder '%x' in 'out/%x.png' (use %n, %e, %d, %i or %%)"), also for a
// trailing lone '%'.
int jobs_template_check(const char *tmpl);

// The same, with what (e.g. "histogram") in place of "-o" in the message.
int jobs_template_check_for(const char *what, const char *tmpl);

// Expands tmpl (checked) for input j into a malloc'd string: %n name, %e ext, %d dir,
// %i index (decimal), %% '%'. An empty %d followed by '/' drops that '/' (so
// 'out/%d/%n.png' gives 'out/a.png' at the top). NULL with err set (out of memory, or a
// result of PATH_MAX bytes or more).
char *jobs_expand(const char *tmpl, const struct job_input *j);

// Checks, before any work, that no two (input, template) pairs write the same path, over all
// templates (the image output first, then side outputs such as a histogram's CSV; "-" and
// NULL templates ignored), comparing the expansions after lexical normalisation (empty and
// "." components dropped, repeated '/' merged: "./a", "a//b/." -> "a", "a/b"; ".." kept).
// O(m log m) for m expansions. -1 with err set naming both inputs and the path, e.g.
// "-o: 'a/x.jpg' and 'b/x.png' would both write 'out/x.png' (add %d or %e to the template)";
// "outputs:" instead of "-o:" when a side output takes part, and "'a.jpg' would write
// 'out/a.png' twice" when one input's two templates meet.
int jobs_check_collisions(const struct job_list *l, const char *const *tmpls, int ntmpls);

// Makes the directories of path (mkdir -p of its dirname, mode 0777 & ~umask); nothing for
// "-" or a path without '/'. -1 with err set naming the directory. Thread-safe: a directory
// that another thread or process creates at the same time is fine.
int jobs_make_dirs(const char *path);

// Frees every input and empties the list. NULL-safe.
void jobs_free(struct job_list *l);

#endif
