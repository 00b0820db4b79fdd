// SPDX-License-Identifier: MIT
// Programs built for later runs. Where the automatic choice found that the device would
// have paid had its programs been in the binary cache (compiling one takes seconds), the
// run, once its own work is done, starts climg again as a process of its own, at the
// lowest priority, with CLIMG_PREPARE naming the programs ("NAME:CH,NAME:CH"); that
// process opens the automatic device, builds them (storing each in the cache), folds what
// it measured into the kept cost model (as upper bounds: it ran at the lowest priority)
// and ends. Nothing waits for it: its standard streams are /dev/null and it keeps no other
// descriptor, so a shell or a pipe does not wait for it either. A process of its own,
// because a build inside the run, even on a thread at the lowest priority, slows the run
// down: loading the compiler's libraries holds the process's locks for loading and for
// mapping memory, which the image's threads need too. It does nothing where the cache
// directory does not exist (any more).
#define _DEFAULT_SOURCE // closefrom
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cachedir.h"
#include "clock.h"
#include "cost_profile.h"
#include "ocl.h"
#include "run.h"
#include "run_job.h"

extern char **environ;

void prepare_note(struct run_auto *a, const struct job_path *jp)
{
	pthread_mutex_lock(&a->mu);
	for (int i = 0; jp->prepare && i < jp->nprog; i++) {
		bool seen = false;
		for (int k = 0; k < a->nprep && !seen; k++)
			seen = a->prep[k].ch == jp->prog[i].ch && !strcmp(a->prep[k].name, jp->prog[i].name);
		if (!seen && a->nprep < (int)(sizeof a->prep / sizeof a->prep[0]))
			a->prep[a->nprep++] = jp->prog[i];
	}
	pthread_mutex_unlock(&a->mu);
}

void prepare_spawn(struct run_auto *a)
{
	char list[2048] = "", *dir = NULL, *env0 = NULL, **envp = NULL;
	char *argv[] = { "climg", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	size_t len = 0, nenv = 0;
	pid_t pid;

	// Only the programs not in the cache (all of them where the device is not known yet).
	for (int i = 0; i < a->nprep; i++) {
		char *path = ocl_cache_file_of(a->m.ident, a->prep[i].name, a->prep[i].ch);
		bool cached = path && access(path, R_OK) == 0;
		free(path);
		if (!cached && len + strlen(a->prep[i].name) + 8 < sizeof list)
			len += (size_t)sprintf(list + len, "%s%s:%d", len ? "," : "", a->prep[i].name,
					       a->prep[i].ch);
	}
	if (!len || getenv("CLIMG_PREPARE") || !(dir = cachedir_find()))
		goto done;
	while (environ[nenv])
		nenv++;
	envp = calloc(nenv + 2, sizeof *envp);
	env0 = malloc(strlen(list) + 16);
	if (!envp || !env0)
		goto done;
	sprintf(env0, "CLIMG_PREPARE=%s", list);
	envp[0] = env0;
	memcpy(envp + 1, environ, nenv * sizeof *envp);
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto done;
	if (posix_spawnattr_init(&attr) == 0) {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		// a process group of its own: the terminal's signals for this job are not its
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
		posix_spawnattr_setpgroup(&attr, 0);
		posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv, envp);
		posix_spawnattr_destroy(&attr);
	}
	posix_spawn_file_actions_destroy(&fa);
done:
	free(dir);
	free(env0);
	free(envp);
}

int run_prepare(const char *list)
{
	struct cost_model m;
	struct ocl_about about;
	struct ocl *o;
	char *dir, name[256], *copy = NULL, *item, *save = NULL;
	double t0 = now_ms();
	int none = 0;

	closefrom(3);
	setpriority(PRIO_PROCESS, 0, 19);
	cachedir_no_create(); // the run's directory, or none
	if (!(dir = cachedir_find()))
		return 0;
	free(dir);
	cost_profile_load(&m);
	if (!(o = ocl_open(NULL, &none)))
		return 0;
	if (ocl_about(o, &about) == 0) {
		snprintf(name, sizeof name, "%s, %s", ocl_device_name(o), about.driver);
		cost_set_device(&m, name, about.is_gpu || !ocl_cpu_device(o) ? COST_DEV_GPU
										: COST_DEV_CPU);
		m.ident = ocl_cache_ident(o);
		cost_learn_open(&m, now_ms() - t0, true);
	}
	copy = strdup(list);
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		struct ocl_program_id id = { item, colon ? atoi(colon + 1) : 0 };
		int built0, cached0, built1, cached1;
		if (!colon)
			continue;
		if (!(dir = cachedir_find())) // gone: nothing to build for
			break;
		free(dir);
		*colon = '\0';
		ocl_build_count(o, &built0, &cached0);
		t0 = now_ms();
		if (ocl_build(o, &id, 1) < 0)
			continue;
		ocl_build_count(o, &built1, &cached1);
		cost_learn_build(&m, id.name, id.ch, cached1 > cached0, now_ms() - t0, true);
	}
	free(copy);
	ocl_close(o);
	if ((dir = cachedir_find())) // still there
		cost_profile_save(&m);
	free(dir);
	return 0;
}
