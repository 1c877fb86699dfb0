/* SPDX-License-Identifier: MIT */
#include "vmm/trace/progress.h"

#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/error.h"

/* Erases the terminal line: to its start, then clear to its end. */
static const char erase[] = "\r\033[K";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a progress line is not worth an error */
		s += w;
		n -= (size_t)w;
	}
}

void progress_format(char *buf, size_t len, double elapsed_s, const struct progress_sample *s,
		     double rate)
{
	int n = snprintf(buf, len, "earlytrace: %.1f s, %" PRIu64 " events (%.0f/s), %" PRIu64
				   " dropped",
			 elapsed_s, s->events, rate, s->dropped);

	if (s->has_time && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", last event at %" PRIu64 ".%03" PRIu64
						   " s guest time",
			 s->guest_ns / 1000000000u, s->guest_ns % 1000000000u / 1000000u);
}

static void tick(struct progress *p)
{
	struct progress_sample s = { 0 };
	double t = now_s(), rate;
	char line[256];

	p->sample(p->ctx, &s);
	rate = t > p->last_s ? (double)(s.events - p->last_events) / (t - p->last_s) : 0;
	if (s.events < p->last_events)
		rate = 0;
	p->last_events = s.events;
	p->last_s = t;
	/* The guest printed lately: its lines come first; the progress line
	 * returns once the console has been quiet for a second. */
	if (s.quiet_marker != p->last_marker) {
		p->last_marker = s.quiet_marker;
		p->quiet_since_s = t;
	}
	if (t - p->quiet_since_s < 1.0)
		return;
	progress_format(line, sizeof(line), t - p->start_s, &s, rate);
	pthread_mutex_lock(&p->lock);
	put(p->fd, erase, sizeof(erase) - 1);
	put(p->fd, line, strlen(line));
	__atomic_store_n(&p->shown, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->lock);
}

static void *progress_main(void *arg)
{
	struct progress *p = arg;

	for (;;) {
		struct timespec until;
		double t;
		bool stop;

		clock_gettime(CLOCK_MONOTONIC, &until);
		t = (double)until.tv_nsec / 1e9 + p->period_s;
		until.tv_sec += (time_t)t;
		until.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
		pthread_mutex_lock(&p->lock);
		while (!(stop = p->stop) &&
		       pthread_cond_timedwait(&p->wake, &p->lock, &until) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			return NULL;
		tick(p);
	}
}

int progress_start(struct progress *p, int fd, double period_s, progress_sample_fn sample,
		   void *ctx)
{
	const char *term = getenv("TERM");
	pthread_condattr_t attr;
	sigset_t all, old;
	int err;

	memset(p, 0, sizeof(*p));
	p->fd = fd;
	if (!isatty(fd) || (term && !strcmp(term, "dumb")))
		return 0;
	p->sample = sample;
	p->ctx = ctx;
	p->period_s = period_s;
	p->start_s = p->last_s = p->quiet_since_s = now_s();
	__atomic_store_n(&p->shown, false, __ATOMIC_RELEASE);
	p->stop = false;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* The VMM's signals are for the vCPU thread, never this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, progress_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		errno = err;
		return et_error_errno("cannot start the progress line's thread");
	}
	p->started = true;
	return 0;
}

void progress_before_output(struct progress *p)
{
	if (!p || !__atomic_load_n(&p->shown, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&p->lock);
	if (__atomic_load_n(&p->shown, __ATOMIC_ACQUIRE)) {
		put(p->fd, erase, sizeof(erase) - 1);
		__atomic_store_n(&p->shown, false, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&p->lock);
}

void progress_stop(struct progress *p)
{
	if (!p->started)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	progress_before_output(p);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	p->started = false;
}
