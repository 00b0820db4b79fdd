// SPDX-License-Identifier: MIT
// What climg says about itself: --help, --list-stages and `climg help STAGE`. The stages'
// parts come from the stages' own files (stage.h: usage, summary, help), so each stage is
// documented in one place; everything fits HELP_COLUMNS columns, descriptions aligned.
#ifndef CLIMG_HELP_H
#define CLIMG_HELP_H

#include <stdio.h>

#include "stages/stage.h"

#define HELP_COLUMNS 80

// --help: the synopsis, every option, each stage's usage and summary, the limits, the exit
// status.
void help_print(FILE *out);

// --list-stages: each stage's usage at the start of a line, its summary aligned beside it
// (or on the next lines, indented, where the usage is long).
void help_list_stages(FILE *out);

// `climg compare --help`: compare's synopsis, options, output and exit status.
void help_compare(FILE *out);

// `climg help NAME`: the stage's usage, its summary, then its help text.
void help_stage(FILE *out, const struct stage_ops *s);

#endif
