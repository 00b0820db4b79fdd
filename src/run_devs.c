// SPDX-License-Identifier: MIT
// The devices of a run and which of them takes each image: see run_devs.h.
#include "run_devs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ocl.h"

struct slot {
	struct run_dev *dev;
	size_t index;     // the device's number in --list-devices
	char spec[24];    // that number, as ocl_open takes it
	char then[96];    // the warning's end when it is dropped
	char label[200];  // devs_label
	bool named;       // the label holds the device's name
	int taken;        // images taken and not given back
	int waiting;      // images between devs_enter and devs_leave
	double ms, pixels; // the stages' time and the pixels of the images it ran
};

struct run_devs {
	bool multi, all, verify;
	int n;
	struct slot *v;
	pthread_mutex_t mu; // guards every field the images change
	bool none_warned;   // the CPU path's warning, once
	int cpu_running;    // images the CPU path took from devs_enter
	double cpu_ms, cpu_pixels;
};

// Adds device number idx to the set (out of memory: -1 with err set).
static int add(struct run_devs *s, size_t idx, const char *item)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i].index == idx)
			return err_set("--devices: device %zu is listed twice (as '%s')", idx, item);
	struct slot *grown = realloc(s->v, (size_t)(s->n + 1) * sizeof *grown);
	if (!grown)
		return err_set("out of memory");
	s->v = grown;
	struct slot *t = &s->v[s->n++];
	*t = (struct slot){ .index = idx };
	snprintf(t->spec, sizeof t->spec, "%zu", idx);
	snprintf(t->then, sizeof t->then, "dropping device %zu; the other devices take its images",
		 idx);
	snprintf(t->label, sizeof t->label, "%zu: not opened", idx);
	return 0;
}

// The devices list names, in s (usage errors only: the list is wrong). -1 with err set,
// *usage false for a driver's failure.
static int parse_list(struct run_devs *s, const char *list, bool *usage)
{
	size_t idx, count;
	const char *p = list;

	*usage = true;
	if (!strcmp(list, "all")) {
		s->all = true;
		if (ocl_device_index(NULL, &idx, &count) < 0) {
			*usage = false;
			return -1;
		}
		if (count == 0 && s->verify) {
			*usage = false;
			return err_set("--verify: no OpenCL device found");
		}
		for (size_t i = 0; i < count; i++)
			if (add(s, i, "all") < 0)
				return -1;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		char item[256];
		if (len == 0 || len >= sizeof item)
			return err_set("--devices: '%s': give 'all' or devices separated by commas, "
				       "each a number from --list-devices or part of a name", list);
		memcpy(item, p, len);
		item[len] = '\0';
		if (!strcmp(item, "all"))
			return err_set("--devices: 'all' goes alone, not in a list ('%s')", list);
		if (ocl_device_index(item, &idx, &count) < 0) {
			err_prefix("--devices");
			return -1;
		}
		if (add(s, idx, item) < 0)
			return -1;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

struct run_devs *devs_start(const struct run_dev_opts *o, const char *list, bool *usage)
{
	struct run_devs *s = calloc(1, sizeof *s);

	*usage = false;
	if (!s) {
		err_set("out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	s->multi = list != NULL && !o->cpu;
	s->verify = o->verify;
	if (!s->multi) {
		if (!(s->v = calloc(1, sizeof *s->v)))
			goto oom;
		s->n = 1;
		s->v[0].dev = dev_start(o);
		if (!s->v[0].dev)
			goto fail;
		return s;
	}
	if (parse_list(s, list, usage) < 0)
		goto fail;
	for (int i = 0; i < s->n; i++) {
		struct run_dev_opts d = *o;
		d.spec = s->v[i].spec;
		d.then = s->v[i].then;
		if (!(s->v[i].dev = dev_start(&d)))
			goto fail;
	}
	return s;
oom:
	err_set("out of memory");
fail:
	devs_close(s);
	return NULL;
}

bool devs_multi(const struct run_devs *s)
{
	return s->multi;
}

int devs_count(const struct run_devs *s)
{
	return s->n;
}

void devs_label(struct run_devs *s, int slot, char *buf, size_t n)
{
	struct dev_status st;
	if (slot < 0) {
		snprintf(buf, n, "cpu");
		return;
	}
	pthread_mutex_lock(&s->mu);
	struct slot *t = &s->v[slot];
	if (!t->named) {
		dev_status(t->dev, NULL, 0, NULL, &st);
		if (st.opened && st.usable) {
			struct ocl *o = dev_get(t->dev, NULL); // open: no wait
			if (o) {
				snprintf(t->label, sizeof t->label, "%zu: %s", t->index,
					 ocl_device_name(o));
				t->named = true;
			}
		}
	}
	snprintf(buf, n, "%s", t->label);
	pthread_mutex_unlock(&s->mu);
}

struct run_dev *devs_take(struct run_devs *s, int *slot)
{
	struct dev_status st;
	int best = -1;
	if (!s->multi) {
		*slot = 0;
		return s->v[0].dev;
	}
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->n; i++) {
		dev_status(s->v[i].dev, NULL, 0, NULL, &st);
		// dropped (with a warning) when it opened or on another image; one that failed
		// is still taken: the image then reports the run's error
		if (st.opened && !st.usable && !st.failed)
			continue;
		if (best < 0 || s->v[i].taken < s->v[best].taken)
			best = i;
	}
	if (best < 0) {
		if (!s->none_warned)
			warn("%s; using the CPU path", s->n ? "no device left" : "no OpenCL device found");
		s->none_warned = true;
		pthread_mutex_unlock(&s->mu);
		*slot = -1;
		return NULL;
	}
	s->v[best].taken++;
	pthread_mutex_unlock(&s->mu);
	*slot = best;
	return s->v[best].dev;
}

void devs_give(struct run_devs *s, int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&s->mu);
	s->v[slot].taken--;
	pthread_mutex_unlock(&s->mu);
}

void devs_drop(struct run_devs *s, int slot, const char *msg)
{
	dev_drop(s->v[slot].dev, msg); // devs_take then sees it dropped (dev_status)
}

bool devs_enter(struct run_devs *s, int slot, double pixels)
{
	bool spill = false;

	(void)pixels; // the estimates are per pixel: the image's size cancels out
	pthread_mutex_lock(&s->mu);
	if (s->all && !s->verify && slot >= 0 && s->v[slot].waiting > 0) {
		const struct slot *t = &s->v[slot];
		if (s->cpu_pixels == 0)
			spill = s->cpu_running == 0; // the CPU path's trial run
		else if (t->pixels > 0)
			spill = t->waiting * (t->ms / t->pixels) >= s->cpu_ms / s->cpu_pixels;
	}
	if (spill)
		s->cpu_running++;
	else if (slot >= 0)
		s->v[slot].waiting++;
	pthread_mutex_unlock(&s->mu);
	return !spill;
}

void devs_leave(struct run_devs *s, int slot, double ms, double pixels)
{
	pthread_mutex_lock(&s->mu);
	if (slot < 0) {
		s->cpu_running--;
		if (ms > 0) {
			s->cpu_ms += ms;
			s->cpu_pixels += pixels;
		}
	} else {
		s->v[slot].waiting--;
		if (ms > 0) {
			s->v[slot].ms += ms;
			s->v[slot].pixels += pixels;
		}
	}
	pthread_mutex_unlock(&s->mu);
}

void devs_close(struct run_devs *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		dev_close(s->v[i].dev);
	free(s->v);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
