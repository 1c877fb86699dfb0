/* SPDX-License-Identifier: MIT */
/*
 * A progress line for long work on a terminal: refreshed in place twice a
 * second on stderr, erased when the work ends, so that nothing of it is
 * left in the scrollback, a pipe or a CI log. When the stream is not a
 * terminal (or TERM is "dumb") nothing is started and nothing is written.
 *
 *   earlytrace: 14.2 s, 203456 events (14530/s), 0 dropped, last event at 13.901 s guest time
 *
 * The numbers come from a sample callback, called from the progress
 * thread: it reads counters another thread updates, word-sized loads that
 * may be a moment stale, which is all a progress line needs. Output of
 * the guest on the same terminal erases the line first
 * (progress_before_output()), and the line stays away while the guest's
 * console has printed in the last second.
 */
#ifndef VMM_TRACE_PROGRESS_H
#define VMM_TRACE_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct progress_sample {
	uint64_t events;   /* so far */
	uint64_t dropped;  /* so far */
	bool has_time;	   /* guest_ns holds something */
	uint64_t guest_ns; /* guest time of the newest event */
	uint64_t quiet_marker; /* changes whenever other output went to the terminal */
};

typedef void (*progress_sample_fn)(void *ctx, struct progress_sample *s);

struct progress {
	int fd;
	bool started;
	pthread_t thread;
	pthread_mutex_t lock; /* the line's state and writes to fd */
	pthread_cond_t wake;  /* progress_stop() ends the wait at once */
	bool shown;	      /* a line is on the terminal now (__atomic_* access) */
	bool stop;	      /* under lock */
	progress_sample_fn sample;
	void *ctx;
	double period_s, start_s, last_s;
	uint64_t last_events, last_marker;
	double quiet_since_s;
};

/* Starts the line on fd when fd is a terminal; otherwise does nothing
 * (p is still safe to pass to the other calls). 0, or -1 with an error. */
int progress_start(struct progress *p, int fd, double period_s, progress_sample_fn sample,
		   void *ctx);
/* Erases the line, if one is shown, before other output to the terminal.
 * Cheap when none is: one atomic load. */
void progress_before_output(struct progress *p);
/* Stops the thread and erases the line. */
void progress_stop(struct progress *p);

/* The line for a sample (for tests): "earlytrace: ..." without a line end. */
void progress_format(char *buf, size_t len, double elapsed_s, const struct progress_sample *s,
		     double rate);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_PROGRESS_H */
