// SPDX-License-Identifier: MIT
// Every stage, in --list-stages order. Adding a stage adds one line to each list.
#include <string.h>

#include "../suggest.h"
#include "stage.h"

extern const struct stage_ops stage_autoorient;
extern const struct stage_ops stage_convolve;
extern const struct stage_ops stage_crop;
extern const struct stage_ops stage_dropalpha;
extern const struct stage_ops stage_equalize;
extern const struct stage_ops stage_flatten;
extern const struct stage_ops stage_flip;
extern const struct stage_ops stage_flop;
extern const struct stage_ops stage_grey;
extern const struct stage_ops stage_histogram;
extern const struct stage_ops stage_invert;
extern const struct stage_ops stage_resize;
extern const struct stage_ops stage_rotate;
extern const struct stage_ops stage_stats;
extern const struct stage_ops stage_threshold;
extern const struct stage_ops stage_transpose;
extern const struct stage_ops stage_transverse;

const struct stage_ops *const stage_list[] = {
	&stage_convolve,
	&stage_grey,
	&stage_flatten,
	&stage_dropalpha,
	&stage_rotate,
	&stage_transpose,
	&stage_resize,
	&stage_transverse,
	&stage_flip,
	&stage_flop,
	&stage_autoorient,
	&stage_crop,
	&stage_invert,
	&stage_threshold,
	&stage_equalize,
	&stage_histogram,
	&stage_stats,
	NULL,
};

const struct stage_ops *stage_find(const char *name)
{
	for (int i = 0; stage_list[i]; i++)
		if (!strcmp(stage_list[i]->name, name))
			return stage_list[i];
	return NULL;
}

const char *stage_suggest(const char *name)
{
	struct suggest s;
	suggest_init(&s, name);
	for (int i = 0; stage_list[i]; i++)
		suggest_try(&s, stage_list[i]->name);
	return suggest_best(&s);
}
