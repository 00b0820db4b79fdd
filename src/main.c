// SPDX-License-Identifier: MIT
// climg: argv to options and a chain of stages; runs it; picks the exit status.
//   0 success, 1 run-time failure, 2 usage error, 3 --verify found a difference.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "err.h"
#include "help.h"
#include "jobs.h"
#include "par.h"
#include "parse.h"
#include "pipeline.h"
#include "run.h"
#include "suggest.h"
#include "version.h"

struct options {
	struct run_opts run;
	bool list_devices, list_stages, help, version;
	const struct stage_ops *help_stage; // --help after a stage's name: that stage's help
	const char *files_from; // --files-from LIST, or NULL
	bool null;              // -0: the list is NUL-separated
	int shard_k, shard_n;   // --shard K/N; 0 = none
	bool progress_forced;   // --progress
	int npos;
	char **pos; // the positional arguments: the inputs, then the stages
	int ninputs, nstages;
	char **stages; // pos + ninputs
};

// Set by a usage error about the shape of the command line (no input, an unknown option, a
// missing value, the input after the stages): main then adds a line pointing to --help.
static bool try_help;

// Records a usage error (printed by main) and returns its exit status.
static int usage_error(const char *fmt, const char *arg)
{
	err_set(fmt, arg);
	return EXIT_USAGE;
}

// The same, with the line pointing to --help.
static int usage_error_try(const char *fmt, const char *arg)
{
	try_help = true;
	return usage_error(fmt, arg);
}

// Every long option parse_args takes, for "did you mean" (tests/t-messages.sh checks that
// a slip of each option --help names is answered with it).
static const char *const option_names[] = {
	"--output", "--jobs", "--files-from", "--null", "--shard", "--expect", "--tolerance",
	"--allow", "--ignore", "--report", "--fail-fast", "--skip-existing", "--progress",
	"--device", "--devices", "--format", "--quality", "--png-level", "--max-pixels",
	"--max-input-bytes", "--time", "--time=json", "--time=text", "--cpu", "--verify",
	"--no-cache", "--strip", "--force", "--quiet", "--list-devices", "--list-stages", "--help",
	"--version", NULL,
};

// An option that parse_args does not know: the nearest one offered, then --help.
static int unknown_option(const char *a)
{
	char name[SUGGEST_MAX_LEN + 2];
	bool known = false;
	// "--qualty=50" is compared by its name, "--time=jsn" (a known name) as a whole
	snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
	for (int i = 0; option_names[i]; i++)
		known |= !strcmp(option_names[i], name);
	try_help = true;
	if (!strcmp(name, "--diff") || !strcmp(name, "--json"))
		return usage_error("%s is an option of climg compare A B", name);
	err_set("unknown option '%s'", a);
	suggest_err(suggest(known ? a : name, option_names));
	return EXIT_USAGE;
}

// Matches argv[*i] against a long option "--name" (with "=VALUE" or the next argument as
// its value when value is non-NULL) or a short one "-c" ("-cVALUE" allowed).
static bool opt_match(char **argv, int argc, int *i, const char *shrt, const char *lng,
		      const char **value, int *missing)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);
	*missing = 0;
	if (!strncmp(a, lng, n) && (a[n] == '\0' || (value && a[n] == '='))) {
		if (!value)
			return true;
		if (a[n] == '=') {
			*value = a + n + 1;
			return true;
		}
	} else if (shrt && !strncmp(a, shrt, 2) && (a[2] == '\0' || value)) {
		if (!value)
			return true;
		if (a[2] != '\0') {
			*value = a + 2;
			return true;
		}
	} else {
		return false;
	}
	if (*i + 1 >= argc) {
		*missing = 1;
		return true;
	}
	*value = argv[++*i];
	return true;
}

// The stage word w names (its name before the first ':'), or NULL.
static const struct stage_ops *stage_named(const char *w)
{
	const char *colon = strchr(w, ':');
	size_t len = colon ? (size_t)(colon - w) : strlen(w);
	for (int i = 0; stage_list[i]; i++)
		if (strlen(stage_list[i]->name) == len && !strncmp(stage_list[i]->name, w, len))
			return stage_list[i];
	return NULL;
}

static bool names_stage(const char *w)
{
	return stage_named(w) != NULL;
}

// Whether w names an existing file or directory.
static bool exists(const char *w)
{
	struct stat st;
	return stat(w, &st) == 0;
}

// The stage whose name w's (before the first ':') is a slip of, or NULL.
static const char *stage_slip(const char *w)
{
	char name[SUGGEST_MAX_LEN + 1];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(w, ":"), w);
	return stage_suggest(name);
}

// Whether word, which names no existing file, reads as a mistyped stage rather than a
// missing input: a name of lowercase letters, digits and '-' before any ':', or a slip of a
// stage's name (GREY), and no '/' (so `climg in.png blur` says "unknown stage 'blur'", and
// `climg a.png b.png` with b.png missing says b.png cannot be opened).
static bool looks_like_stage(const char *w)
{
	struct stat st;
	if (!strcmp(w, "-") || strchr(w, '/') || stat(w, &st) == 0)
		return false;
	if (stage_slip(w))
		return true;
	for (const char *p = w; *p && *p != ':'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

// Appends " WORD" to buf (size bytes, a string), WORD quoted for the shell where it needs
// it; what does not fit is left out.
static void append_word(char *buf, size_t size, const char *word)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_./:%=+,@-";
	size_t n = strlen(buf);
	bool quote = !*word || (strspn(word, plain) != strlen(word) && !strchr(word, '\''));
	snprintf(buf + n, size - n, quote ? " '%s'" : " %s", word);
}

// The input given after the stages (the first word names a stage, or is a slip of a stage's
// name, near, and a later one names an existing file): says how the command should read.
static int input_order(const struct options *o, const char *near)
{
	char cmd[512] = "climg", first[SUGGEST_MAX_LEN + 256];
	// the first word with the stage's name put right (gray:bt709: grey:bt709)
	snprintf(first, sizeof first, "%s%.255s", near ? near : "",
		 near ? o->pos[0] + strcspn(o->pos[0], ":") : o->pos[0]);
	for (int pass = 0; pass < 2; pass++) // the existing files, then the rest
		for (int j = 0; j < o->npos; j++)
			if ((j > 0 && exists(o->pos[j])) == (pass == 0))
				append_word(cmd, sizeof cmd, j == 0 ? first : o->pos[j]);
	if (o->run.output) {
		append_word(cmd, sizeof cmd, "-o");
		append_word(cmd, sizeof cmd, o->run.output);
	}
	if (near)
		err_set("unknown stage '%.*s'; did you mean %s? The input comes first: %s",
			(int)strcspn(o->pos[0], ":"), o->pos[0], near, cmd);
	else
		err_set("the input comes first: %s (climg INPUT... STAGE... -o OUTPUT)", cmd);
	try_help = true;
	return EXIT_USAGE;
}

// The inputs: the positional words before the first that names a stage (its name before
// the first ':'), or after the first input, that reads as a mistyped one; a file named like
// a stage is written ./grey. A first word that names a stage (or is a slip of one's name
// and no file) followed by an existing file is an input put after the stages.
static int split_inputs(struct options *o)
{
	int k = 0;
	bool later_file = false;
	const char *near = NULL;
	for (int j = 1; j < o->npos && !later_file; j++)
		later_file = exists(o->pos[j]);
	if (later_file && !names_stage(o->pos[0]) && looks_like_stage(o->pos[0]))
		near = stage_slip(o->pos[0]);
	if (later_file && (names_stage(o->pos[0]) || near))
		return input_order(o, near);
	while (k < o->npos && !names_stage(o->pos[k]) && !(k > 0 && looks_like_stage(o->pos[k])))
		k++;
	o->ninputs = k;
	o->stages = o->pos + k;
	o->nstages = o->npos - k;
	if (k == 0)
		return usage_error_try("no input given: the input comes first (climg INPUT STAGE... "
				       "-o OUTPUT); a file named like a stage is written ./%s",
				       o->pos[0]);
	return 0;
}

// Whether the run has anything to show for itself: an image output, a golden image to
// compare with, a stage's file, or a report of its own (--verify's line, --time, --report).
// EXIT_USAGE with err set when it has none.
static int check_purpose(const struct options *o, const struct chain *c)
{
	const struct run_opts *r = &o->run;
	struct stat st;
	if (r->output || r->expect || r->verify || r->time || r->report)
		return 0;
	for (int i = 0; i < c->n; i++) {
		struct stage_file files[STAGE_FILES_MAX];
		if (c->st[i].ops->files && c->st[i].ops->files(c->st[i].params, files) > 0)
			return 0;
	}
	if (o->files_from || o->ninputs > 1 || (stat(o->pos[0], &st) == 0 && S_ISDIR(st.st_mode)))
		return usage_error("%s", "no output given: name each image's output with a template "
				   "such as -o 'out/%n.png' (or give --expect, a histogram's file, "
				   "--verify or --report)");
	return usage_error("%s", "no output given: give -o FILE to write the result (-o - for "
			   "standard output)");
}

// The job list: the inputs named on the command line or listed in --files-from, directories
// walked, then this process's shard, once the whole list's outputs are checked (see
// run_check_outputs). 0 or an exit status with err set.
static int make_jobs(const struct options *o, const struct chain *c, struct job_list *l)
{
	int rc = o->files_from ? jobs_add_list(l, o->files_from, o->null)
			       : jobs_add_args(l, o->ninputs, o->pos);
	if (rc < 0)
		return EXIT_RUN;
	if (l->n == 0 && !o->shard_n) {
		err_set("no input images%s", o->files_from ? " in the list" : " under the directories given");
		return EXIT_RUN;
	}
	if (o->shard_n) {
		rc = run_check_outputs(&o->run, c, l->v, l->n);
		if (rc)
			return rc;
		jobs_shard(l, o->shard_k, o->shard_n);
	}
	return 0;
}

// CLIMG_DEVICE and CLIMG_DEVICES, where no option names a device (--cpu ignores them):
// they exclude each other as the options do. 0 or EXIT_USAGE with err set.
static int env_devices(struct run_opts *r)
{
	const char *one = getenv("CLIMG_DEVICE"), *set = getenv("CLIMG_DEVICES");

	if (r->device || r->devices)
		return 0;
	one = one && *one ? one : NULL;
	set = set && *set ? set : NULL;
	if (one && set && !r->cpu)
		return usage_error("%s", "CLIMG_DEVICE and CLIMG_DEVICES exclude each other");
	r->device = one;
	r->devices = set;
	return 0;
}

// Parses argv into o. Returns 0, or an exit status after printing the usage error.
static int parse_args(int argc, char **argv, struct options *o, char **positional)
{
	int npos = 0, missing;
	bool only_positional = false;
	long n;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		if (only_positional || a[0] != '-' || !strcmp(a, "-")) {
			positional[npos++] = argv[i];
			continue;
		}
#define VALUE(s, l) (opt_match(argv, argc, &i, s, l, &v, &missing))
#define FLAG(s, l) (opt_match(argv, argc, &i, s, l, NULL, &missing))
		if (!strcmp(a, "--"))
			only_positional = true;
		else if (VALUE("-o", "--output")) {
			if (!missing && o->run.output)
				return usage_error("-o given twice ('%s'); a batch names its outputs with "
						   "one template such as -o 'out/%%n.png'", v);
			o->run.output = v;
		} else if (VALUE("-j", "--jobs")) {
			if (!missing && !parse_long(v, 1, PAR_MAX_THREADS, &n))
				return usage_error("--jobs must be a whole number from 1 to 256, not '%s'", v);
			o->run.jobs = (int)n;
		} else if (VALUE(NULL, "--files-from"))
			o->files_from = v;
		else if (FLAG("-0", "--null"))
			o->null = true;
		else if (VALUE(NULL, "--shard")) {
			if (!missing && jobs_parse_shard(v, &o->shard_k, &o->shard_n) < 0)
				return EXIT_USAGE;
		} else if (VALUE(NULL, "--expect")) {
			if (!missing && jobs_template_check_for("--expect", v) < 0)
				return EXIT_USAGE;
			o->run.expect = v;
		} else if (VALUE(NULL, "--tolerance") || VALUE(NULL, "--allow") ||
			   VALUE(NULL, "--ignore")) {
			char name[16];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
			if (!missing && cmp_parse_opt(&o->run.cmp, name, v) < 0)
				return EXIT_USAGE;
		} else if (VALUE(NULL, "--report"))
			o->run.report = v;
		else if (FLAG(NULL, "--fail-fast"))
			o->run.fail_fast = true;
		else if (FLAG(NULL, "--skip-existing"))
			o->run.skip_existing = true;
		else if (FLAG(NULL, "--progress"))
			o->progress_forced = true;
		else if (VALUE("-d", "--device"))
			o->run.device = v;
		else if (VALUE(NULL, "--devices"))
			o->run.devices = v;
		else if (VALUE(NULL, "--format"))
			o->run.format = v;
		else if (VALUE(NULL, "--quality")) {
			if (!missing && !parse_long(v, 1, 100, &n))
				return usage_error("--quality must be a whole number from 1 to 100, not '%s'", v);
			o->run.write.jpeg_quality = (int)n;
			o->run.quality_given = true;
		} else if (VALUE(NULL, "--png-level")) {
			if (!missing && !parse_long(v, 0, 9, &n))
				return usage_error("--png-level must be a whole number from 0 to 9, not '%s'", v);
			o->run.write.png_level = (int)n;
			o->run.png_level_given = true;
		} else if (VALUE(NULL, "--max-pixels")) {
			if (!missing && !parse_long(v, 1, (long)IMG_MAX_SIDE * IMG_MAX_SIDE, &n))
				return usage_error("--max-pixels must be a whole number from 1 to 4294836225, not '%s'", v);
			o->run.limits.max_pixels = (uint64_t)n;
		} else if (VALUE(NULL, "--max-input-bytes")) {
			if (!missing && !parse_long(v, 1, 1L << 40, &n))
				return usage_error("--max-input-bytes must be a whole number from 1 to 1099511627776, not '%s'", v);
			o->run.limits.max_input_bytes = (uint64_t)n;
		} else if (!strcmp(a, "--time") || !strcmp(a, "--time=text")) {
			o->run.time = true;
		} else if (!strcmp(a, "--time=json")) {
			o->run.time = o->run.time_json = true;
		} else if (FLAG(NULL, "--cpu"))
			o->run.cpu = true;
		else if (FLAG(NULL, "--verify"))
			o->run.verify = true;
		else if (FLAG(NULL, "--no-cache"))
			o->run.no_cache = true;
		else if (FLAG(NULL, "--strip"))
			o->run.strip = true;
		else if (FLAG("-q", "--quiet"))
			err_quiet = 1;
		else if (FLAG(NULL, "--list-devices"))
			o->list_devices = true;
		else if (FLAG(NULL, "--list-stages"))
			o->list_stages = true;
		else if (FLAG("-h", "--help"))
			o->help = true;
		else if (FLAG(NULL, "--version"))
			o->version = true;
		else if (FLAG("-f", "--force"))
			o->run.force = true;
		else
			return unknown_option(a);
		if (missing)
			return usage_error_try("option '%s' needs a value", a);
#undef VALUE
#undef FLAG
	}
	o->pos = positional;
	o->npos = npos;
	if (o->help) // `climg rotate --help`: that stage's
		for (int i = 0; i < npos && !o->help_stage; i++)
			o->help_stage = stage_named(positional[i]);
	if (o->help || o->version || o->list_devices || o->list_stages)
		return 0;
	if (npos == 0 && !o->files_from)
		return usage_error_try("%s", "no input given");
	if (o->run.cpu && o->run.verify)
		return usage_error("%s", "--verify compares OpenCL with the CPU path; it cannot be used with --cpu");
	if (o->run.cpu && o->run.device)
		return usage_error("%s", "--cpu and --device exclude each other");
	if (o->run.cpu && o->run.devices)
		return usage_error("%s", "--cpu and --devices exclude each other");
	if (o->run.device && o->run.devices)
		return usage_error("%s", "--device and --devices exclude each other");
	if (o->null && !o->files_from)
		return usage_error("%s", "-0 (--null) goes with --files-from");
	if (o->files_from) { // every positional word is a stage
		o->stages = positional;
		o->nstages = npos;
		return 0;
	}
	return split_inputs(o);
}

// `climg help` (argv[0] is "help"): the whole help, or one stage's.
static int help_command(int argc, char **argv)
{
	const struct stage_ops *s = argc == 2 ? stage_named(argv[1]) : NULL;
	int status = 0;
	if (argc > 2) {
		fprintf(stderr, "climg: help takes one stage's name, e.g. climg help rotate\n");
		return EXIT_USAGE;
	}
	if (argc == 1)
		help_print(stdout);
	else if (s)
		help_stage(stdout, s);
	else {
		err_set("unknown stage '%s' (see climg --list-stages)", argv[1]);
		suggest_err(stage_suggest(argv[1]));
		fprintf(stderr, "climg: %s\n", err_msg());
		return EXIT_USAGE;
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "climg: cannot write to standard output\n");
		status = EXIT_RUN;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {
		.run = { .write = { .jpeg_quality = 90, .png_level = 6 },
			 .limits = { .max_pixels = 268435456, .max_input_bytes = 1073741824 } },
	};
	char **positional = calloc((size_t)argc + 1, sizeof *positional);
	struct chain chain = { 0 };
	struct job_list jobs = { 0 };
	int status;

	if (!positional) {
		fputs("climg: out of memory\n", stderr);
		return EXIT_RUN;
	}
	if (getenv("CLIMG_PREPARE")) { // climg's own background process (run.h)
		free(positional);
		return run_prepare(getenv("CLIMG_PREPARE"));
	}
	signal(SIGPIPE, SIG_IGN); // a closed stdout is a write error, reported like any other
	signal(SIGXFSZ, SIG_IGN); // so is a file size limit (ulimit -f): EFBIG, then cleanup
	if (argc > 1 && !strcmp(argv[1], "help")) { // climg help [STAGE]
		free(positional);
		return help_command(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "compare")) { // a command of its own (compare.c)
		free(positional);
		status = compare_main(argc - 1, argv + 1);
		if (fflush(stdout) != 0) {
			fprintf(stderr, "climg: cannot write to standard output\n");
			status = EXIT_USAGE;
		}
		return status;
	}
	status = parse_args(argc, argv, &o, positional);
	if (!status)
		status = env_devices(&o.run);
	if (status)
		; // a usage error, reported below
	else if (o.help && o.help_stage)
		help_stage(stdout, o.help_stage);
	else if (o.help)
		help_print(stdout);
	else if (o.version)
		status = version_print(stdout) < 0 ? EXIT_RUN : 0;
	else if (o.list_stages)
		help_list_stages(stdout);
	else if (o.list_devices)
		status = run_list_devices(stdout) < 0 ? EXIT_RUN : 0;
	else if (chain_parse(&chain, o.nstages, o.stages) < 0)
		status = EXIT_USAGE;
	else if (!(status = check_purpose(&o, &chain)) && !(status = make_jobs(&o, &chain, &jobs))) {
		o.run.progress = o.progress_forced || (!err_quiet && isatty(STDERR_FILENO));
		status = run_batch(&o.run, &chain, jobs.v, jobs.n);
	}
	if (status && *err_msg())
		fprintf(stderr, "climg: %s\n", err_msg());
	if (status && try_help)
		fputs("try 'climg --help'\n", stderr);
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, "climg: cannot write to standard output\n");
		status = EXIT_RUN;
	}
	if (run_left_behind()) { // a device's thread still runs: end under it (see run.h)
		fflush(stderr);
		_exit(status);
	}
	jobs_free(&jobs);
	chain_free(&chain);
	free(positional);
	return status;
}
