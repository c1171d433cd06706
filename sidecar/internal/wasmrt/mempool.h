// The part of wasmtime's C API (wasmtime/config.h, v25) that the memory
// pool implements, declared here so that this package needs no include
// path into the wasmtime-go module. The layouts and signatures are those
// of wasmtime_linear_memory_t, wasmtime_memory_creator_t and their callbacks
// in that header; wasmtime-go is pinned at v25.0.0 in go.mod.

#ifndef PALYRA_MEMPOOL_H
#define PALYRA_MEMPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct wasmtime_error wasmtime_error_t;
typedef uint8_t *(*palyra_memory_get_callback_t)(void *env, size_t *byte_size, size_t *maximum_byte_size);
typedef wasmtime_error_t *(*palyra_memory_grow_callback_t)(void *env, size_t new_size);

typedef struct palyra_linear_memory {
	void *env;
	palyra_memory_get_callback_t get_memory;
	palyra_memory_grow_callback_t grow_memory;
	void (*finalizer)(void *);
} palyra_linear_memory_t;

typedef wasmtime_error_t *(*palyra_new_memory_callback_t)(void *env, const void *ty, size_t minimum,
	size_t maximum, size_t reserved_size_in_bytes, size_t guard_size_in_bytes,
	palyra_linear_memory_t *memory_ret);

typedef struct palyra_memory_creator {
	void *env;
	palyra_new_memory_callback_t new_memory;
	void (*finalizer)(void *);
} palyra_memory_creator_t;

// palyra_mempool_install sets a pooling memory creator on a wasm_config_t
// and the memory settings it needs (dynamic memories, no guard region).
// It returns 0, or -1 when out of memory (the config is then unchanged).
int palyra_mempool_install(void *config, int max_free, size_t max_free_rw_bytes);

// palyra_mempool_stats reports the pools' counters (for tests).
void palyra_mempool_stats(uint64_t *created, uint64_t *reused, uint64_t *released, uint64_t *unmapped);

#endif
