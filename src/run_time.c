// SPDX-License-Identifier: MIT
// --time: one image's phases, one line each on stderr or one JSON object.
#include <stdio.h>

#include "clock.h"
#include "run_job.h"

// Effective GB/s of moving bytes in ms (0 when ms is 0).
static double gbps(double bytes, double ms)
{
	return ms > 0 ? bytes / (ms * 1e6) : 0;
}

// The rest of a transfer's --time line: its rate, or for zero-copy what happened instead.
static const char *transfer_str(char buf[96], double bytes, double ms, bool in_place,
				const char *how)
{
	if (in_place && bytes == 0)
		snprintf(buf, 96, " zero-copy: %s", how);
	else if (in_place)
		snprintf(buf, 96, "%9.2f GB/s  zero-copy image; side outputs copied", gbps(bytes, ms));
	else
		snprintf(buf, 96, "%9.2f GB/s", gbps(bytes, ms));
	return buf;
}

// Where a download that copied went: "" for zero-copy (transfer_str says it all).
static const char *download_dest(char buf[96], const struct run_times *t)
{
	if (t->download_in_place)
		buf[0] = '\0';
	else if (t->download_into_input)
		snprintf(buf, 96, "  into the input's pinned memory");
	else
		snprintf(buf, 96, "  into memory allocated in %.3f ms", t->out_alloc_ms);
	return buf;
}

// Where stage i ran.
static const char *stage_path(const struct timing *tm, int i)
{
	return i >= tm->dev_from && !tm->fell_back ? "device" : "cpu";
}

// s as a JSON string's contents (no quotes).
static void json_str(const char *s)
{
	for (const char *p = s; *p; p++) // a token may hold any byte
		fprintf(stderr, (*p == '"' || *p == '\\') ? "\\%c" :
				(unsigned char)*p < 32 ? "\\u%04x" : "%c", *p);
}

// One line per phase on stderr, or one JSON object. Stage rates count the bytes the stage
// reads plus those it writes.
void time_report(const struct timing *tm, const struct plan *c, bool json)
{
	// What the transfers copied: the images, unless zero-copy left them in place (then
	// only the side outputs were downloaded).
	double up_bytes = tm->run.upload_in_place ? 0 : (double)geom_bytes(&c->in);
	double down_bytes = (tm->run.download_in_place ? 0 : (double)geom_bytes(&c->out)) +
			    (double)c->side_cl_bytes;
	double total = now_ms() - tm->t0;
	char rate[96], dest[96];
	const char *sep = "";
	if (json) {
		fprintf(stderr, "{\"device\": %s", tm->on_cpu ? "false" : "true");
		if (tm->opened)
			fprintf(stderr, ", \"open_ms\": %.3f, \"open_wait_ms\": %.3f", tm->open_ms,
				tm->open_wait_ms);
		fprintf(stderr, ", \"decode_ms\": %.3f, \"decode_strips\": %d", tm->decode_ms,
			tm->decode_strips);
		if (tm->opened)
			fprintf(stderr, ", \"copy_in_ms\": %.3f, \"copy_in_gbps\": %.2f",
				tm->copy_in_ms, gbps((double)tm->copy_in_bytes, tm->copy_in_ms));
		if (!tm->on_cpu)
			fprintf(stderr, ", \"build_ms\": %.3f, \"programs\": %d, \"programs_cached\": %d"
				", \"upload_ms\": %.3f, \"upload_gbps\": %.2f, \"upload_zero_copy\": %s",
				tm->run.build_ms, tm->programs, tm->programs_cached,
				tm->run.upload_ms, gbps(up_bytes, tm->run.upload_ms),
				tm->run.upload_in_place ? "true" : "false");
		fputs(", \"stages\": [", stderr);
	} else {
		if (tm->opened && tm->open_waited)
			fprintf(stderr, "climg: time: %-22s %10.3f ms  alongside decode, then waited "
				"%.3f ms\n", "open", tm->open_ms, tm->open_wait_ms);
		else if (tm->opened && tm->open_ms > 0 && tm->dev_from < c->n && !tm->fell_back)
			fprintf(stderr, "climg: time: %-22s %10.3f ms  alongside decode and the CPU "
				"path, then waited %.3f ms at stage %d\n", "open", tm->open_ms,
				tm->switch_wait_ms, tm->dev_from + 1);
		else if (tm->opened && tm->open_ms > 0)
			fprintf(stderr, "climg: time: %-22s %10.3f ms  alongside decode and the CPU "
				"path, not waited for\n", "open", tm->open_ms);
		else if (tm->opened)
			fprintf(stderr, "climg: time: %-22s %10s     still opening when the image was "
				"done, not waited for\n", "open", "-");
		if (tm->decode_strips > 1)
			fprintf(stderr, "climg: time: %-22s %10.3f ms  in %d strips at once\n",
				"decode", tm->decode_ms, tm->decode_strips);
		else
			fprintf(stderr, "climg: time: %-22s %10.3f ms\n", "decode", tm->decode_ms);
		if (tm->copy_in_bytes)
			fprintf(stderr, "climg: time: %-22s %10.3f ms %9.2f GB/s  into pinned memory\n",
				"copy-in", tm->copy_in_ms,
				gbps((double)tm->copy_in_bytes, tm->copy_in_ms));
		if (!tm->on_cpu) {
			fprintf(stderr, "climg: time: %-22s %10.3f ms  %d of %d programs from the cache\n",
				"build", tm->run.build_ms, tm->programs_cached, tm->programs);
			fprintf(stderr, "climg: time: %-22s %10.3f ms %s\n", "upload", tm->run.upload_ms,
				transfer_str(rate, up_bytes, tm->run.upload_ms, tm->run.upload_in_place,
					     "the device reads the input in place"));
		}
		fprintf(stderr, "climg: time: %-22s %s\n", "path", tm->why);
	}
	for (int i = 0; i < c->n; i++) {
		const struct plan_stage *s = &c->st[i];
		double bytes = (double)geom_bytes(&s->in);
		if (!s->plan.passthrough)
			bytes += (double)geom_bytes(&s->plan.out);
		if (json) {
			fprintf(stderr, "%s{\"stage\": \"", sep);
			json_str(s->token);
			fprintf(stderr, "\", \"ms\": %.4f, \"gbps\": %.2f, \"path\": \"%s\"}",
				tm->stage_ms[i], gbps(bytes, tm->stage_ms[i]), stage_path(tm, i));
			sep = ", ";
		} else {
			fprintf(stderr, "climg: time: %2d %-19.19s %10.4f ms %9.2f GB/s  %s\n", i + 1,
				s->token, tm->stage_ms[i], gbps(bytes, tm->stage_ms[i]),
				stage_path(tm, i));
		}
	}
	if (json) {
		fputs("]", stderr);
		if (!tm->on_cpu && tm->run.verified)
			fputs(", \"download_ms\": null, \"download_gbps\": null"
			      ", \"download_zero_copy\": false, \"download_into_input\": false"
			      ", \"out_alloc_ms\": null, \"verified\": true", stderr);
		else if (!tm->on_cpu)
			fprintf(stderr, ", \"download_ms\": %.3f, \"download_gbps\": %.2f"
				", \"download_zero_copy\": %s, \"download_into_input\": %s"
				", \"out_alloc_ms\": %.3f",
				tm->run.download_ms, gbps(down_bytes, tm->run.download_ms),
				tm->run.download_in_place ? "true" : "false",
				tm->run.download_into_input ? "true" : "false", tm->run.out_alloc_ms);
		fprintf(stderr, ", \"encode_ms\": %.3f, \"total_ms\": %.3f, \"why\": \"", tm->encode_ms,
			total);
		json_str(tm->why);
		fputs("\"}\n", stderr);
	} else {
		if (!tm->on_cpu && tm->run.verified)
			fprintf(stderr, "climg: time: %-22s %10s    not timed: --verify writes the "
				"CPU path's output\n", "download", "-");
		else if (!tm->on_cpu)
			fprintf(stderr, "climg: time: %-22s %10.3f ms %s%s\n", "download",
				tm->run.download_ms,
				transfer_str(rate, down_bytes, tm->run.download_ms,
					     tm->run.download_in_place,
					     "the last stage wrote the output in place"),
				download_dest(dest, &tm->run));
		fprintf(stderr, "climg: time: %-22s %10.3f ms\n", "encode", tm->encode_ms);
		fprintf(stderr, "climg: time: %-22s %10.3f ms\n", "total", total);
	}
}

