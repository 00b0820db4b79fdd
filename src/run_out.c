// SPDX-License-Identifier: MIT
// One image's outputs: the image -o names and the files its stages write (a histogram's CSV
// and plot), each a template expanded for the input, checked from the arguments alone,
// opened before the input is read and committed only after everything is written.
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "run_job.h"

// Whether path is standard output or an existing special file (/dev/null, a FIFO): such
// outputs have no extension to go by and are written as PNG unless --format says otherwise.
static bool is_stream(const char *path)
{
	struct stat st;
	return !strcmp(path, "-") ||
	       (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

// Whether two output names are the same destination: the same name, or existing files that
// are one (a hard link, "./h.csv" and "h.csv").
static bool same_dest(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!strcmp(a, b))
		return true;
	return strcmp(a, "-") && strcmp(b, "-") && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
}

// Whether path names an existing directory.
static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// An image would go to standard output while it is a terminal: refused, as gzip does,
// unless --force. what names the output in the message. EXIT_USAGE with err set, or 0.
static int tty_check(const struct run_opts *o, const char *path, const char *what)
{
	if (strcmp(path, "-") || o->force || !isatty(STDOUT_FILENO))
		return 0;
	err_set("%s: will not write an image to a terminal; redirect standard output "
		"(> out.png) or give --force",
		what);
	return EXIT_USAGE;
}

// The image output's path and format.
static int image_plan(const struct run_ctx *x, const struct job_input *in, struct job_outs *j)
{
	const struct run_opts *o = x->o;
	if (!o->output) {
		if (o->format) {
			err_set("--format needs -o");
			return EXIT_USAGE;
		}
		return 0;
	}
	j->path = jobs_expand(o->output, in);
	if (!j->path)
		return EXIT_USAGE;
	j->path_varies = jobs_template_varies(o->output);
	if (!x->single && !strcmp(j->path, "-")) {
		err_set("-o -: several inputs cannot share standard output; give a template "
			"such as -o 'out/%%n.png'");
		return EXIT_USAGE;
	}
	if (tty_check(o, j->path, "-o -"))
		return EXIT_USAGE;
	if (is_dir(j->path)) { // a run-time failure, as any output that cannot be written
		size_t len = strlen(j->path);
		err_set("%s: is a directory; -o names the file to write, e.g. -o %s%sout.png",
			j->path, j->path, len && j->path[len - 1] == '/' ? "" : "/");
		return EXIT_RUN;
	}
	if (o->format) {
		j->fmt = img_format_from_name(o->format);
		if (!j->fmt) {
			err_set("unknown --format '%s' (use png, jpeg, bmp, tga, pgm or ppm)",
				o->format);
			return EXIT_USAGE;
		}
		return 0;
	}
	j->fmt = img_format_from_ext(j->path);
	if (!j->fmt && is_stream(j->path))
		j->fmt = FMT_PNG;
	if (!j->fmt) {
		err_set("cannot tell the output format of '%s' (use .png, .jpg, .bmp, .tga, .pgm "
			"or .ppm, or --format)",
			j->path);
		return EXIT_USAGE;
	}
	return 0;
}

// Checks side output i of j against -o and the earlier ones, and decides its format.
static int side_check(const struct run_ctx *x, struct job_outs *j, int i)
{
	struct side_out *s = &j->side[i];
	const char *path = s->path, *token = x->c->st[s->stage].token;
	enum img_format ext = img_format_from_ext(path);
	if (!x->single && !strcmp(path, "-")) {
		err_set("%s: several inputs cannot share standard output; give a destination "
			"such as %s:h/%%n.csv",
			token, x->c->st[s->stage].ops->name);
		return EXIT_USAGE;
	}
	if (j->path && same_dest(path, j->path)) {
		err_set(strcmp(path, "-") ? "%s: writes to '%s', the image output too"
					  : "%s: writes to standard output, and so does -o -",
			token, path);
		return EXIT_USAGE;
	}
	for (int k = 0; k < i; k++) {
		const struct side_out *t = &j->side[k];
		if (!same_dest(path, t->path))
			continue;
		const char *ta = x->c->st[t->stage].token;
		if (!strcmp(path, "-"))
			err_set("stage %d (%s) and stage %d (%s) both write to standard output",
				t->stage + 1, ta, s->stage + 1, token);
		else
			err_set("stage %d (%s) and stage %d (%s) both write to '%s'", t->stage + 1,
				ta, s->stage + 1, token, path);
		return EXIT_USAGE;
	}
	if (!s->image) {
		if (ext) {
			err_set("%s: '%s' would hold text, not an image; for a picture use plot=%s",
				token, path, path);
			return EXIT_USAGE;
		}
		return 0;
	}
	if (tty_check(x->o, path, token))
		return EXIT_USAGE;
	s->fmt = ext ? ext : is_stream(path) ? FMT_PNG : FMT_NONE;
	if (!s->fmt) {
		err_set("%s: cannot tell the image format of '%s' (use .png, .jpg, .bmp, .tga or "
			".ppm)",
			token, path);
		return EXIT_USAGE;
	}
	if (img_format_check(s->fmt, 3, NULL) < 0) {
		err_prefix("%s: %s", token, path);
		return EXIT_USAGE;
	}
	return 0;
}

int outs_plan(const struct run_ctx *x, const struct job_input *in, struct job_outs *j)
{
	const struct chain *c = x->c;
	int rc;
	*j = (struct job_outs){ 0 };
	rc = image_plan(x, in, j);
	if (rc)
		return rc;
	j->side = calloc((size_t)c->n * STAGE_FILES_MAX + 1, sizeof *j->side);
	if (!j->side) {
		err_set("out of memory");
		return EXIT_RUN;
	}
	for (int i = 0; i < c->n; i++) {
		const struct chain_stage *st = &c->st[i];
		struct stage_file files[STAGE_FILES_MAX];
		int k = st->ops->files ? st->ops->files(st->params, files) : 0;
		for (int f = 0; f < k; f++) {
			struct side_out *s = &j->side[j->nside++];
			*s = (struct side_out){ .stage = i, .index = f, .image = files[f].image };
			s->path = jobs_expand(files[f].path, in);
			if (!s->path)
				return EXIT_USAGE;
			s->varies = jobs_template_varies(files[f].path);
			rc = side_check(x, j, j->nside - 1);
			if (rc)
				return rc;
		}
	}
	return 0;
}

// Whether path names an existing regular file.
static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool outs_exist(const struct job_outs *j)
{
	if (!j->path && !j->nside)
		return false;
	if (j->path && !exists(j->path))
		return false;
	for (int i = 0; i < j->nside; i++)
		if (!exists(j->side[i].path))
			return false;
	return true;
}

// Opens one output; where its name came from a template with placeholders, the directories
// it names are made first (a plain path must name an existing directory).
static struct outfile *open_one(const char *path, bool make_dirs, bool sums)
{
	struct outfile *f;
	if (make_dirs && strcmp(path, "-") && jobs_make_dirs(path) < 0)
		return NULL;
	f = outfile_open(path);
	if (f && sums)
		outfile_sum_on(f);
	return f;
}

int outs_open(struct job_outs *j, bool sums)
{
	if (j->path && !(j->f = open_one(j->path, j->path_varies, sums)))
		return -1;
	for (int i = 0; i < j->nside; i++)
		if (!(j->side[i].f = open_one(j->side[i].path, j->side[i].varies, sums)))
			return -1;
	return 0;
}

// Writes every stage file from the side outputs of the finished run (not committed yet).
static int side_write(struct job_outs *j, const struct plan *p, const struct write_opts *opts)
{
	for (int i = 0; i < j->nside; i++) {
		const struct side_out *s = &j->side[i];
		const struct plan_stage *st = &p->st[s->stage];
		struct stage_render r;
		int rc;
		if (st->ops->render(st->params, &st->in, st->side, s->index, &r) < 0)
			return err_prefix("%s", st->token);
		if (s->image)
			rc = img_encode(s->f, s->fmt, &r.im, opts);
		else
			rc = outfile_write(s->f, r.text, r.len);
		free(r.im.data);
		free(r.text);
		if (rc < 0)
			return -1;
	}
	return 0;
}

// Commits f (freed, NULL afterwards), filling *sum where asked.
static int commit_one(struct outfile **f, struct outfile_sum *sum)
{
	int rc = sum ? outfile_commit_sum(*f, sum) : outfile_commit(*f);
	*f = NULL;
	return rc;
}

int outs_write(struct job_outs *j, const struct run_opts *o, const struct plan *p,
	       const struct img *res, const struct img_meta *meta, struct outfile_sum *sums)
{
	struct write_opts w = o->write;
	int drops_alpha = 0;
	w.meta = o->strip ? NULL : meta;
	if (j->f) {
		if (img_format_check(j->fmt, res->ch, &drops_alpha) < 0)
			return err_prefix("%s", j->path);
		if (drops_alpha)
			warn("%s output has no alpha channel; alpha dropped",
			     img_format_name(j->fmt));
		if (img_encode(j->f, j->fmt, res, &w) < 0)
			return -1; // aborted by outs_free: the temporary file goes
	}
	if (side_write(j, p, &o->write) < 0)
		return -1;
	// Everything is written before anything is committed, so a failure to encode or write
	// leaves no file; only a failing commit (a rename) can leave earlier ones in place.
	if (j->f && commit_one(&j->f, sums ? &sums[0] : NULL) < 0)
		return -1;
	for (int i = 0; i < j->nside; i++)
		if (commit_one(&j->side[i].f, sums ? &sums[1 + i] : NULL) < 0)
			return -1;
	return 0;
}

void outs_free(struct job_outs *j)
{
	outfile_abort(j->f);
	free(j->path);
	for (int i = 0; j->side && i < j->nside; i++) {
		outfile_abort(j->side[i].f);
		free(j->side[i].path);
	}
	free(j->side);
	*j = (struct job_outs){ 0 };
}
