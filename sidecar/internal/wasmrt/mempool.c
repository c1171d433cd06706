//go:build linux

// A pool of linear memories for wasmtime's on-demand instance allocator
// (see mempool_linux.go for why and for the invariants).

#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mempool.h"

extern wasmtime_error_t *wasmtime_error_new(const char *);
extern void wasmtime_config_host_memory_creator_set(void *, palyra_memory_creator_t *);
extern void wasmtime_config_static_memory_maximum_size_set(void *, uint64_t);
extern void wasmtime_config_dynamic_memory_guard_size_set(void *, uint64_t);
extern void wasmtime_config_dynamic_memory_reserved_for_growth_set(void *, uint64_t);

// The largest reservation: a 32-bit memory can address 4 GiB.
#define MAX_RESERVE ((size_t)4 << 30)

// A released memory with at most this many read-write bytes is cleared by
// writing zeros; a larger one with madvise(MADV_DONTNEED). The madvise
// flushes the TLB of every CPU the process ran on (an interrupt to each
// that is busy, in a VM a costly one), and every page the next call
// touches then faults in again; for a small memory (a WAT tool's single
// 64 KiB page) both cost more than the memset, which leaves the pages
// resident for the next call. At most max_free such memories are kept, so
// this holds at most that many times 64 KiB resident.
#define CLEAR_BY_WRITING ((size_t)64 << 10)

typedef struct mempool mempool;

typedef struct pmem {
	struct pmem *next;
	mempool *owner;
	uint8_t *base;
	size_t reserve; // bytes mapped: the memory grows in place up to here
	size_t size;    // wasm byte size while in use
	size_t maximum; // the memory's maximum, at most reserve
	size_t rw;      // [0, rw) is read-write (page-rounded); the rest PROT_NONE
} pmem;

struct mempool {
	pthread_mutex_t mu;
	pmem *free;
	int nfree, max_free;
	size_t free_rw, max_free_rw;
};

static _Atomic uint64_t st_created, st_reused, st_released, st_unmapped;

static size_t page_round(size_t n) {
	size_t p = (size_t)sysconf(_SC_PAGESIZE);
	return (n + p - 1) & ~(p - 1);
}

static void unmap(pmem *m) {
	munmap(m->base, m->reserve);
	free(m);
	atomic_fetch_add(&st_unmapped, 1);
}

// set_rw makes exactly [0, want) read-write and [want, reserve) PROT_NONE,
// given that [0, m->rw) is read-write now.
static int set_rw(pmem *m, size_t want) {
	int rc = 0;
	if (m->rw > want) {
		rc = mprotect(m->base + want, m->rw - want, PROT_NONE);
	} else if (m->rw < want) {
		rc = mprotect(m->base + m->rw, want - m->rw, PROT_READ | PROT_WRITE);
	}
	if (rc == 0) m->rw = want;
	return rc;
}

static uint8_t *mp_get(void *env, size_t *byte_size, size_t *maximum) {
	pmem *m = env;
	*byte_size = m->size;
	*maximum = m->maximum;
	return m->base;
}

static wasmtime_error_t *mp_grow(void *env, size_t new_size) {
	pmem *m = env;
	if (new_size > m->maximum) {
		return wasmtime_error_new("memory pool: growth beyond the memory's reservation");
	}
	size_t want = page_round(new_size);
	if (want > m->rw && set_rw(m, want) != 0) {
		return wasmtime_error_new("memory pool: mprotect failed while growing");
	}
	m->size = new_size;
	return NULL;
}

// clear zeroes the read-write part of m, by writing zeros when it is small
// (CLEAR_BY_WRITING) and with MADV_DONTNEED otherwise (private anonymous
// pages read back as zero). It returns 0, or -1 when the memory could not
// be cleared.
static int clear(pmem *m) {
	if (m->rw == 0) return 0;
	if (m->rw <= CLEAR_BY_WRITING) {
		memset(m->base, 0, m->rw);
		return 0;
	}
	return madvise(m->base, m->rw, MADV_DONTNEED);
}

// mp_release is the memory's finalizer: wasmtime calls it when the store
// that held the memory is dropped. Everything the guest wrote is discarded
// (clear) before the memory can be handed out again; a memory that cannot
// be cleared is unmapped, never reused.
static void mp_release(void *env) {
	pmem *m = env;
	mempool *p = m->owner;
	atomic_fetch_add(&st_released, 1);
	pthread_mutex_lock(&p->mu);
	bool keep = p->nfree < p->max_free;
	bool keep_rw = keep && p->free_rw + m->rw <= p->max_free_rw;
	pthread_mutex_unlock(&p->mu);
	if (!keep || clear(m) != 0) {
		unmap(m);
		return;
	}
	m->size = 0;
	// Free memories beyond the read-write budget go back to PROT_NONE, so
	// that the pool never holds much writable memory (RLIMIT_DATA counts it).
	if (!keep_rw && set_rw(m, 0) != 0) {
		unmap(m);
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (p->nfree < p->max_free && p->free_rw + m->rw <= p->max_free_rw) {
		m->next = p->free;
		p->free = m;
		p->nfree++;
		p->free_rw += m->rw;
		m = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	if (m) unmap(m);
}

static wasmtime_error_t *mp_new(void *env, const void *ty, size_t minimum, size_t maximum,
                                size_t reserved, size_t guard, palyra_linear_memory_t *ret) {
	(void)ty;
	mempool *p = env;
	// The pool serves dynamic memories without a guard region only: the
	// generated code bounds-checks every access against the current size,
	// so no access ever depends on a guard page (a fault in a guard page
	// of a memory not made by wasmtime would abort the process).
	if (reserved != 0 || guard != 0) {
		return wasmtime_error_new("memory pool: static memories and guard regions are not supported");
	}
	size_t reserve = maximum < MAX_RESERVE ? page_round(maximum) : MAX_RESERVE;
	if (minimum > reserve) {
		return wasmtime_error_new("memory pool: minimum size beyond 4 GiB");
	}
	pmem *m = NULL, **pp;
	pthread_mutex_lock(&p->mu);
	for (pp = &p->free; *pp; pp = &(*pp)->next) {
		if ((*pp)->reserve == reserve) {
			m = *pp;
			*pp = m->next;
			p->nfree--;
			p->free_rw -= m->rw;
			break;
		}
	}
	pthread_mutex_unlock(&p->mu);
	if (m) {
		atomic_fetch_add(&st_reused, 1);
	} else {
		m = calloc(1, sizeof *m);
		if (!m) return wasmtime_error_new("memory pool: out of memory");
		void *b = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (b == MAP_FAILED) {
			free(m);
			return wasmtime_error_new("memory pool: cannot reserve address space for a linear memory");
		}
		m->base = b;
		m->reserve = reserve;
		m->owner = p;
		atomic_fetch_add(&st_created, 1);
	}
	m->next = NULL;
	m->maximum = maximum < reserve ? maximum : reserve;
	if (set_rw(m, page_round(minimum)) != 0) {
		unmap(m);
		return wasmtime_error_new("memory pool: mprotect failed");
	}
	m->size = minimum;
	ret->env = m;
	ret->get_memory = mp_get;
	ret->grow_memory = mp_grow;
	ret->finalizer = mp_release;
	return NULL;
}

// mp_finalize runs when the engine is dropped, after every store (and so
// every memory) of it.
static void mp_finalize(void *env) {
	mempool *p = env;
	pmem *m = p->free;
	while (m) {
		pmem *n = m->next;
		unmap(m);
		m = n;
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int palyra_mempool_install(void *config, int max_free, size_t max_free_rw_bytes) {
	mempool *p = calloc(1, sizeof *p);
	if (!p) return -1;
	pthread_mutex_init(&p->mu, NULL);
	p->max_free = max_free;
	p->max_free_rw = max_free_rw_bytes;
	wasmtime_config_static_memory_maximum_size_set(config, 0);
	wasmtime_config_dynamic_memory_guard_size_set(config, 0);
	wasmtime_config_dynamic_memory_reserved_for_growth_set(config, 0);
	palyra_memory_creator_t c = {p, mp_new, mp_finalize};
	wasmtime_config_host_memory_creator_set(config, &c);
	return 0;
}

void palyra_mempool_stats(uint64_t *created, uint64_t *reused, uint64_t *released, uint64_t *unmapped) {
	*created = atomic_load(&st_created);
	*reused = atomic_load(&st_reused);
	*released = atomic_load(&st_released);
	*unmapped = atomic_load(&st_unmapped);
}
