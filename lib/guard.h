#ifndef TLBLAB_GUARD_H
#define TLBLAB_GUARD_H

#include <pthread.h>

/*
 * A mutex held to the end of the enclosing block, as the kernel's
 * guard(mutex)(&m) (include/linux/cleanup.h), with GCC's cleanup
 * attribute:
 *
 *	GUARD_MUTEX(&sc->lock);
 *	if (sc->quit)
 *		return NULL;	(unlocked here)
 *	...			(and at the block's end)
 *
 * Every way out of the block unlocks it once, so a path added later cannot
 * forget. A goto must not jump over a guard into its block (the compiler
 * cannot tell then whether it holds the lock): put the guarded part in a
 * function of its own, as the daemon does.
 */

static inline pthread_mutex_t *guard_mutex_take(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	return m;
}

static inline void guard_mutex_release(pthread_mutex_t **m)
{
	pthread_mutex_unlock(*m);
}

#define GUARD_CAT_(a, b) a##b
#define GUARD_CAT(a, b) GUARD_CAT_(a, b)
#define GUARD_MUTEX(m) \
	pthread_mutex_t *GUARD_CAT(guard_held_, __LINE__) \
		__attribute__((cleanup(guard_mutex_release), unused)) = guard_mutex_take(m)

#endif
