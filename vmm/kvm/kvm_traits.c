/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/kvm_traits.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/util/error.h"

/* $EARLYTRACE_KVM_TRAITS: what to take away from what the KVM reports. */
static int apply_env(struct kvm_traits *t)
{
	const char *env = getenv(KVM_TRAITS_ENV);
	char buf[128], *save = NULL;

	if (!env || !*env)
		return 0;
	if (strlen(env) >= sizeof(buf))
		return et_error("$%s is too long", KVM_TRAITS_ENV);
	strcpy(buf, env);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "no-int3")) {
			t->int3_exits = false;
			t->int3_exit_ticks = 0;
			snprintf(t->no_int3, sizeof(t->no_int3),
				 "this KVM's int3 exits are not used ($%s=%s)", KVM_TRAITS_ENV, env);
		} else if (!strcmp(w, "no-hw-bp")) {
			t->hw_bp_exits = false;
			snprintf(t->no_hw_bp, sizeof(t->no_hw_bp),
				 "this KVM's debug-register breakpoints are not used ($%s=%s)",
				 KVM_TRAITS_ENV, env);
		} else {
			return et_error("$%s: unknown word '%s' (no-int3, no-hw-bp)", KVM_TRAITS_ENV,
					w);
		}
	}
	return 0;
}

int kvm_traits_probe(int kvm_fd, struct kvm_traits *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = arch_probe_kvm_traits(kvm_fd, out);
	return ret ? ret : apply_env(out);
}

static pthread_mutex_t traits_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kvm_traits traits;
static bool traits_known;

const struct kvm_traits *kvm_traits_get(int kvm_fd)
{
	const struct kvm_traits *t = &traits;

	pthread_mutex_lock(&traits_lock);
	if (!traits_known) {
		if (kvm_traits_probe(kvm_fd, &traits))
			t = NULL;
		else
			traits_known = true;
	}
	pthread_mutex_unlock(&traits_lock);
	return t;
}
