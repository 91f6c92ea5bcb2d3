/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The DLA engine (kmd/engine/): runs one task of a compiled network on one
 * NVDLA instance, as the nvdla/sw firmware's contract defines it, and the
 * validator that decides beforehand whether a task is safe to run.
 *
 * Two steps, usable from the kernel and from userspace alike:
 *
 * 1. Validation, in the submitter's context, touching no register:
 *
 *      nvdla_dla_task_measure(&src, &bytes, &err);          bytes the checked task needs
 *      storage = allocate(bytes);                           (kvmalloc, malloc, ...)
 *      nvdla_dla_task_validate(cfg, &src, storage, bytes, &task, &err);
 *
 *    The source describes the task's address list (one device address and a
 *    byte size per entry) and reads descriptor bytes through a callback. The
 *    validator reads every descriptor the task reaches once, checks it, and
 *    keeps a copy in @storage: the engine never reads the task's buffers
 *    again, so buffers that userspace rewrites later change nothing.
 *    It succeeds only if every memory range the hardware would read or
 *    write lies inside the address-list entry it names.
 *
 * 2. Execution, with a per-device engine context the embedder allocates:
 *
 *      engine = nvdla_dla_engine_init(storage, nvdla_dla_engine_size(), cfg, &ops, priv, &err);
 *      nvdla_dla_engine_start(engine, task, &err);      programs and starts the first operations
 *      on each interrupt:
 *        nvdla_dla_engine_isr(engine);                  hard-IRQ safe: latch and clear status
 *        nvdla_dla_engine_process(engine, &done, &err); schedule what the events allow
 *      nvdla_dla_engine_reset(engine);                  after an error or a timeout,
 *                                                       with a device reset
 *
 *    The engine is not reentrant: calls on one engine must be serialised by
 *    the embedder (in the kernel: one spinlock taken with irqsave around
 *    isr and process; none of the calls sleeps). Every wait is bounded
 *    (NVDLA_DLA_POLL_LIMIT register reads) and every failure is returned.
 *
 * Errors: functions return 0 or a negative errno: -EINVAL for a task that
 * breaks a rule or a bad argument, -EOPNOTSUPP for what the configuration
 * (or this engine) lacks, -ENOSPC for storage too small, -EBUSY, -ETIMEDOUT
 * for a bounded wait, -EIO for impossible hardware state, and the read
 * callback's own errno (-EPROTO if it returned a positive value). They also
 * fill struct nvdla_dla_error (when given) with the precise rule (enum
 * nvdla_dla_code) and a sentence naming the operation, field, value and limit.
 */
#ifndef NVDLA_HW_DLA_ENGINE_H
#define NVDLA_HW_DLA_ENGINE_H

#include "nvdla/hw/dla_interface.h"
#include "nvdla/hw/nvdla_config.h"

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of a task (the original ioctl allows 6144 addresses per task). */
#define NVDLA_DLA_MAX_OPERATIONS 4096
#define NVDLA_DLA_MAX_LUTS 256
#define NVDLA_DLA_MAX_ADDRESSES 6144
/* Register reads a bounded wait makes before it gives up. */
#define NVDLA_DLA_POLL_LIMIT 10000

/* The precise rule an error breaks. */
enum nvdla_dla_code {
	NVDLA_DLA_OK = 0,
	NVDLA_DLA_E_ARGUMENT,	 /* a bad argument to the API (NULL, storage too small) */
	NVDLA_DLA_E_VERSION,	 /* the interface version is not supported */
	NVDLA_DLA_E_READ,	 /* the read callback failed */
	NVDLA_DLA_E_COUNT,	 /* a count is zero, too large or inconsistent */
	NVDLA_DLA_E_ADDRESS,	 /* an address-list index is out of range */
	NVDLA_DLA_E_LIST,	 /* a descriptor list does not fit in its address-list entry */
	NVDLA_DLA_E_OP_INDEX,	 /* an operation index (head, consumer, parent) is out of range */
	NVDLA_DLA_E_OP_TYPE,	 /* an operation has the wrong type for where it is used */
	NVDLA_DLA_E_EVENT,	 /* a dependency names an event its operation never raises */
	NVDLA_DLA_E_GRAPH,	 /* the dependency graph or an operation queue cannot complete */
	NVDLA_DLA_E_LUT_INDEX,	 /* a LUT index is out of range */
	NVDLA_DLA_E_ENUM,	 /* a field holds a value outside its enumeration */
	NVDLA_DLA_E_FIELD,	 /* a field holds a value outside its range */
	NVDLA_DLA_E_ALIGN,	 /* an address, stride or size is misaligned */
	NVDLA_DLA_E_STRIDE,	 /* a stride is too small for what it separates */
	NVDLA_DLA_E_EXTENT,	 /* a surface extends past its address-list entry */
	NVDLA_DLA_E_MEMORY,	 /* a surface's memory type does not match its entry */
	NVDLA_DLA_E_UNSUPPORTED, /* the configuration lacks the feature, or the engine does */
	NVDLA_DLA_E_STORAGE,	 /* the storage given is too small or misaligned */
	NVDLA_DLA_E_BUSY,	 /* the engine is running a task */
	NVDLA_DLA_E_STATE,	 /* the call does not fit the engine's state */
	NVDLA_DLA_E_TIMEOUT,	 /* a bounded wait for the hardware expired */
	NVDLA_DLA_E_HARDWARE,	 /* the hardware reported something impossible */
	NVDLA_DLA_CODE_COUNT
};

#define NVDLA_DLA_ERROR_MESSAGE_SIZE 256

struct nvdla_dla_error {
	int32_t code;	   /* enum nvdla_dla_code */
	int32_t operation; /* the operation concerned, or -1 */
	const char *field; /* the field concerned (a static string), or NULL */
	uint64_t value;	   /* its value */
	uint64_t limit;	   /* the limit it breaks */
	char message[NVDLA_DLA_ERROR_MESSAGE_SIZE]; /* one sentence, NUL-terminated */
};

/* A short name for a code ("E_EXTENT"). */
const char *nvdla_dla_code_name(int code);

/* ---- Validation ---- */

/* Flags of an address-list entry. */
#define NVDLA_DLA_BUFFER_SECONDARY (1u << 0) /* behind the CV-SRAM (secondary) interface */

/* One address-list entry: what the hardware may touch through it. */
struct nvdla_dla_buffer {
	uint64_t address; /* device address of the entry's first byte (buffer + entry offset) */
	uint64_t size;	  /* bytes usable from there (the buffer's size minus the entry offset) */
	uint32_t flags;	  /* NVDLA_DLA_BUFFER_* */
	uint32_t reserved;
};

/* A task as submitted. */
struct nvdla_dla_task_source {
	/* The interface version of the loadable's DLA blobs (NVDLA_DLA_VERSION()). */
	uint32_t version;
	uint32_t num_addresses;
	const struct nvdla_dla_buffer *addresses; /* [0]: the network descriptor */
	/*
	 * Copies @size bytes at byte @offset of entry @index into @dst; the
	 * validator only asks for bytes inside [0, addresses[index].size).
	 * Returns 0 or a negative errno.
	 */
	int (*read)(void *priv, uint32_t index, uint64_t offset, void *dst, uint32_t size);
	void *priv;
};

/* A validated task: an opaque copy of everything the engine needs. */
struct nvdla_dla_task;

/* Bytes of storage the checked copy of @src needs (reads the network descriptor only). */
int nvdla_dla_task_measure(const struct nvdla_dla_task_source *src, size_t *bytes,
			   struct nvdla_dla_error *err);

/*
 * Validates @src for configuration @cfg into @storage (8-byte aligned, @bytes
 * long, at least what nvdla_dla_task_measure() said) and sets *@task. On
 * failure *@task is NULL and @err says why.
 */
int nvdla_dla_task_validate(const struct nvdla_hw_config *cfg,
			    const struct nvdla_dla_task_source *src, void *storage, size_t bytes,
			    struct nvdla_dla_task **task, struct nvdla_dla_error *err);

/* Facts about a validated task. */
uint32_t nvdla_dla_task_num_operations(const struct nvdla_dla_task *task);
uint32_t nvdla_dla_task_version(const struct nvdla_dla_task *task);

/* ---- Execution ---- */

/* What the embedder provides: register access, and optionally a short delay for polls. */
struct nvdla_dla_engine_ops {
	uint32_t (*reg_read)(void *priv, uint32_t offset);
	void (*reg_write)(void *priv, uint32_t offset, uint32_t value);
	void (*delay_us)(void *priv, uint32_t us); /* may be NULL */
};

struct nvdla_dla_engine;

/* Bytes of an engine context (allocate with 8-byte alignment). */
size_t nvdla_dla_engine_size(void);

/*
 * Initialises an engine context in @storage for one device of configuration
 * @cfg. Touches no register. Returns the engine, or NULL with @err filled.
 */
struct nvdla_dla_engine *nvdla_dla_engine_init(void *storage, size_t bytes,
					       const struct nvdla_hw_config *cfg,
					       const struct nvdla_dla_engine_ops *ops, void *priv,
					       struct nvdla_dla_error *err);

/*
 * Starts @task: clears and unmasks the interrupts, programs the first
 * operations and enables those without dependencies. @task must stay valid
 * (and unmodified) until the task completes or the engine is reset; its
 * dependency counters are reinitialised, so a task can be started again.
 */
int nvdla_dla_engine_start(struct nvdla_dla_engine *engine, struct nvdla_dla_task *task,
			   struct nvdla_dla_error *err);

/*
 * The interrupt handler's part: reads GLB S_INTR_STATUS, clears it and
 * latches the events. Returns true when it found any (the embedder then
 * calls nvdla_dla_engine_process()). Safe in hard-IRQ context.
 */
bool nvdla_dla_engine_isr(struct nvdla_dla_engine *engine);

/*
 * Handles the latched events: completions, dependency updates, programming
 * and enabling what became possible. Sets *@done when every operation of the
 * task has completed (the engine is then idle). An error stops the task: the
 * embedder fails the job and calls nvdla_dla_engine_reset().
 */
int nvdla_dla_engine_process(struct nvdla_dla_engine *engine, bool *done,
			     struct nvdla_dla_error *err);

/* Whether a task is running. */
bool nvdla_dla_engine_busy(const struct nvdla_dla_engine *engine);

/*
 * Forgets the current task (after a timeout or an error): masks and clears
 * the interrupts. Operations already enabled cannot be recalled through
 * registers: the embedder resets the device (power/clock reset on silicon,
 * emu::Device::reset() for the model) before it starts another task.
 */
void nvdla_dla_engine_reset(struct nvdla_dla_engine *engine);

#ifdef __cplusplus
}
#endif

#endif /* NVDLA_HW_DLA_ENGINE_H */
