// SPDX-License-Identifier: MIT
// The cost model kept from run to run (cost_profile.h): a text file in the cache directory,
//   DIR/cost-profile.txt
// one value a line, which a person can read:
//   climg cost profile 1
//   version VERSION                 the climg that wrote it (climg --version)
//   saved SECONDS                   when (Unix time)
//   device TYPE NAME                the automatic device: unknown, none, cpu or gpu, and
//                                   "NAME (PLATFORM), DRIVER"
//   ident HEX                       what names its programs in the binary cache
//   open_ms MS, xfer_ns NS, switch_ns NS, copy_ns NS, launch_ms MS, load_ms MS,
//   compile_ms MS
//   decode_ns JPEG OTHER
//   kind NAME CPU_NS DEV_NS CPU1_NS one a kind of stage (struct stage_cost, struct
//                                   cost_kind; without CPU1_NS, CPU_NS for both)
//   program NAME CH COMPILE_MS      one a program the device compiled
// A file written by another climg (whose kernels and stages may differ), older than
// COST_PROFILE_MAX_DAYS days, or not of this format is not used: the model then starts
// again from its built-in values and runs measure it anew. A line that does not parse is
// skipped. The file is written to a temporary file and renamed into place, so concurrent
// runs each read a whole file (the last to save wins, but for the device's part: a run that
// learned nothing of the device keeps it as the file has it then). Like the program cache it never
// makes a run fail, and --no-cache neither reads nor writes it.
#include "cost_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cachedir.h"
#include "version.h"

static const char magic[] = "climg cost profile 1";

static const char *const type_names[] = { "unknown", "none", "cpu", "gpu" };

// DIR/cost-profile.txt, newly allocated; NULL where there is no cache directory.
static char *profile_path(void)
{
	char *dir = cachedir_get(), *path = NULL;
	if (dir && (path = malloc(strlen(dir) + 32)))
		sprintf(path, "%s/cost-profile.txt", dir);
	free(dir);
	return path;
}

// Reads one line of the profile (not a device line) into m; one that does not parse is
// skipped.
static void parse_line(struct cost_model *m, char *line)
{
	char name[24];
	unsigned long long ident;
	double a, b, c;
	int ch, n;

	if (sscanf(line, "open_ms %lf", &a) == 1 && a >= 0)
		m->open_ms = a;
	else if (sscanf(line, "xfer_ns %lf", &a) == 1 && a >= 0)
		m->xfer_ns = a;
	else if (sscanf(line, "switch_ns %lf", &a) == 1 && a >= 0)
		m->switch_ns = a;
	else if (sscanf(line, "copy_ns %lf", &a) == 1 && a >= 0)
		m->copy_ns = a;
	else if (sscanf(line, "launch_ms %lf", &a) == 1 && a >= 0)
		m->launch_ms = a;
	else if (sscanf(line, "load_ms %lf", &a) == 1 && a >= 0)
		m->load_ms = a;
	else if (sscanf(line, "compile_ms %lf", &a) == 1 && a >= 0)
		m->compile_ms = a;
	else if (sscanf(line, "decode_ns %lf %lf", &a, &b) == 2 && a >= 0 && b >= 0) {
		m->decode_ns[0] = a;
		m->decode_ns[1] = b;
	} else if ((n = sscanf(line, "kind %23s %lf %lf %lf", name, &a, &b, &c)) >= 3 && a > 0 &&
		   b > 0 && (n == 3 || c > 0)) {
		struct cost_kind *k = cost_kind(m, name);
		if (k) {
			k->cpu_ns = a;
			k->dev_ns = b;
			k->cpu1_ns = n == 4 ? c : a;
		}
	} else if (sscanf(line, "program %23s %d %lf", name, &ch, &a) == 3 && ch >= 1 && ch <= 4 &&
		   a > 0) {
		cost_learn_build(m, name, ch, false, a, true);
	} else if (sscanf(line, "ident %llx", &ident) == 1) {
		m->ident = (uint64_t)ident;
	}
}

void cost_profile_load(struct cost_model *m)
{
	char *path = profile_path(), line[1024], version[256] = "";
	FILE *f = path ? fopen(path, "r") : NULL;
	double saved = 0, now = (double)time(NULL);
	bool ok = false;

	cost_init(m, COST_DEV_UNKNOWN);
	free(path);
	if (!f)
		return;
	// the header, the version and the date first; anything else is not a profile to use
	if (fgets(line, sizeof line, f) && !strncmp(line, magic, sizeof magic - 1) &&
	    fgets(line, sizeof line, f) && sscanf(line, "version %255s", version) == 1 &&
	    !strcmp(version, climg_version()) && fgets(line, sizeof line, f) &&
	    sscanf(line, "saved %lf", &saved) == 1 && saved <= now + 60 &&
	    now - saved <= COST_PROFILE_MAX_DAYS * 86400.0)
		ok = true;
	while (ok && fgets(line, sizeof line, f)) {
		char name[256];
		int t, n = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "device %15s %n", name, &n) == 1 && n > 0) {
			for (t = 0; t < 4 && strcmp(type_names[t], name); t++)
				;
			if (t < 4)
				cost_set_device(m, line + n, (enum cost_dev_type)t);
		} else {
			parse_line(m, line);
		}
	}
	fclose(f);
	m->learned = m->dev_learned = false;
}

// Copies the device's part of src (struct cost_model: which device, its programs' ident, how
// it opens, builds, moves and runs) into m.
static void device_part_take(struct cost_model *m, const struct cost_model *src)
{
	m->dev_type = src->dev_type;
	memcpy(m->device, src->device, sizeof m->device);
	m->ident = src->ident;
	m->open_ms = src->open_ms;
	m->xfer_ns = src->xfer_ns;
	m->switch_ns = src->switch_ns;
	m->copy_ns = src->copy_ns;
	m->launch_ms = src->launch_ms;
	m->load_ms = src->load_ms;
	m->compile_ms = src->compile_ms;
	m->nprog = src->nprog;
	memcpy(m->prog, src->prog, sizeof m->prog);
	for (int i = 0; i < src->nkinds; i++) {
		struct cost_kind *k = cost_kind(m, src->kind[i].name);
		if (k)
			k->dev_ns = src->kind[i].dev_ns;
	}
}

void cost_profile_save(struct cost_model *m)
{
	char *path = profile_path(), *tmp = NULL;
	FILE *f = NULL;
	int fd = -1;
	bool written = false;

	if (!path || !m->learned || !(tmp = malloc(strlen(path) + 16)))
		goto done;
	// A run that learned nothing of the device keeps the device's part as it is kept now:
	// another run, such as the one that builds programs in the background, may have
	// learned it since this one loaded the model, and concurrent runs (xargs, GNU parallel)
	// that never open the device would otherwise hand back what they loaded.
	if (!m->dev_learned) {
		struct cost_model now;
		cost_profile_load(&now);
		if (now.dev_type != COST_DEV_UNKNOWN)
			device_part_take(m, &now);
	}
	sprintf(tmp, "%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0 || !(f = fdopen(fd, "w")))
		goto done;
	fd = -1;
	fprintf(f, "%s\nversion %s\nsaved %.0f\ndevice %s %s\n", magic, climg_version(),
		(double)time(NULL), type_names[m->dev_type], m->device);
	fprintf(f, "ident %016llx\n", (unsigned long long)m->ident);
	fprintf(f, "open_ms %.3f\nxfer_ns %.6g\nswitch_ns %.6g\ncopy_ns %.6g\nlaunch_ms %.4f\n"
		   "load_ms %.3f\ncompile_ms %.1f\ndecode_ns %.4g %.4g\n",
		m->open_ms, m->xfer_ns, m->switch_ns, m->copy_ns, m->launch_ms, m->load_ms,
		m->compile_ms,
		m->decode_ns[0],
		m->decode_ns[1]);
	for (int i = 0; i < m->nkinds; i++)
		fprintf(f, "kind %s %.6g %.6g %.6g\n", m->kind[i].name, m->kind[i].cpu_ns,
			m->kind[i].dev_ns, m->kind[i].cpu1_ns);
	for (int i = 0; i < m->nprog; i++)
		fprintf(f, "program %s %d %.1f\n", m->prog[i].name, m->prog[i].ch,
			m->prog[i].compile_ms);
	written = !ferror(f);
	if (fclose(f) != 0)
		written = false;
	f = NULL;
	if (written && rename(tmp, path) == 0) {
		m->learned = m->dev_learned = false;
		free(tmp);
		tmp = NULL;
	}
done:
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(path);
}
