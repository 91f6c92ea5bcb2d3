/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The NVDLA virtual platform: an ivshmem PCI device (QEMU ivshmem-plain or
 * ivshmem-doorbell, 1af4:1110) whose shared memory (BAR2) begins with this
 * header. The host side (the hardware model, tools/nvdla_vp, or a test
 * harness) writes it before the guest driver probes; a device without it is
 * left alone.
 *
 *   offset 0               struct nvdla_ivshmem_header
 *   mailbox_offset         the register mailbox (struct nvdla_vp_mailbox and
 *                          its ring): register accesses carried to the
 *                          hardware model; mailbox_size 0 means no model is
 *                          attached (registers read as all ones)
 *   memory_offset          the carve-out buffers are allocated from (device
 *                          address = the guest's bus address of the byte);
 *                          memory_size 0: buffers come from guest DMA memory
 *
 * Plain C with fixed-size little-endian fields so that the host model
 * includes it too (<linux/types.h> is the UAPI one there).
 */
#ifndef NVDLA_IVSHMEM_H
#define NVDLA_IVSHMEM_H

#include <linux/types.h>

#define NVDLA_IVSHMEM_MAGIC "NVDLA-VP"
#define NVDLA_IVSHMEM_VERSION 1
#define NVDLA_IVSHMEM_VENDOR 0x1af4
#define NVDLA_IVSHMEM_DEVICE 0x1110

struct nvdla_ivshmem_header {
	char magic[8];		/* NVDLA_IVSHMEM_MAGIC, not NUL-terminated */
	__le32 version;		/* NVDLA_IVSHMEM_VERSION */
	__le32 header_size;	/* sizeof(struct nvdla_ivshmem_header) */
	char config[32];	/* hardware configuration ("nv_full"), NUL-terminated */
	__le64 mailbox_offset;	/* page aligned */
	__le64 mailbox_size;
	__le64 memory_offset;	/* page aligned */
	__le64 memory_size;	/* page aligned */
	__le32 flags;		/* none defined: 0 */
	__le32 reserved[7];
};

/*
 * ---- The register mailbox (version 1) ---------------------------------------
 *
 * Needs ivshmem-doorbell: the guest rings the host model through the doorbell
 * register (BAR0 offset 12, value host_peer << 16 | doorbell_vector), the
 * model interrupts the guest through its eventfd, which QEMU turns into MSI-X
 * vector irq_vector.
 *
 *   mailbox_offset + 0            struct nvdla_vp_mailbox (256 bytes)
 *   mailbox_offset + ring_offset  ring_entries x struct nvdla_vp_entry
 *
 * The ring is single-producer (the guest) and single-consumer (the host).
 * Indices are free-running u32; entry i lives in ring[i % ring_entries]. The
 * guest fills entries [producer, ...) while at most ring_entries are
 * unconsumed, publishes its producer index (a write barrier first) and rings
 * the doorbell. The host executes the published entries in order (register
 * writes and reads, in the order the guest issued them), stores each entry's
 * result (status, and the value of a read) and then advances the consumer
 * index. So a register read is a round trip: the guest appends it, publishes,
 * rings and spins until the consumer index passes it. Writes are not waited
 * for: they are published before every read, before the driver waits for an
 * interrupt and when the ring is full, so the model sees every access in
 * program order. Register accesses are answered at once, as hardware answers
 * them: the host computes the operations a write enables on another thread
 * (their registers read busy meanwhile) and raises the interrupt when they
 * are done; only RESET and ATTACH wait for a computation under way (the
 * computation's DMA is refused from the RESET on).
 *
 * The host trusts nothing here: a published producer index more than
 * ring_entries ahead of its consumer index is a protocol error (nothing is
 * executed, the host skips to it); an entry with an unknown operation, a
 * register offset outside reg_space or not 4-byte aligned, or a bad value is
 * refused (status != 0, counted in NVDLA_VP_STAT_BAD_ENTRIES) and the next one
 * runs. The model's DMA reaches only the carve-out: every access outside it is
 * refused and counted (NVDLA_VP_STAT_OUTSIDE_CARVEOUT).
 *
 * The model's interrupt line is level triggered; MSI-X is an edge. The host
 * raises the MSI-X vector after a batch of entries when the line rose during
 * it, or when the line is still high after a batch that wrote a register (the
 * handler cleared some status bits, others remain).
 */
#define NVDLA_VP_MAILBOX_MAGIC "NVDLA-MB"
#define NVDLA_VP_MAILBOX_VERSION 1
#define NVDLA_VP_MIN_RING_ENTRIES 64
#define NVDLA_VP_MAX_RING_ENTRIES 65536

/* Operations (nvdla_vp_entry.op). */
enum nvdla_vp_op {
	NVDLA_VP_OP_NOP = 0,
	NVDLA_VP_OP_WRITE = 1,	/* register reg = value (low 32 bits) */
	NVDLA_VP_OP_READ = 2,	/* value = register reg */
	NVDLA_VP_OP_RESET = 3,	/* the accelerator's reset: power-on state, a stall released */
	NVDLA_VP_OP_ATTACH = 4,	/* value: device address of the carve-out's first byte */
	NVDLA_VP_OP_STALL = 5,	/* test hook: hold every operation back until the next reset */
	NVDLA_VP_OP_HANG = 6,	/* test hook: stop answering for value milliseconds (<= 60000) */
};

/* Results (nvdla_vp_entry.status), stored by the host. */
enum nvdla_vp_status {
	NVDLA_VP_OK = 0,
	NVDLA_VP_BAD_OP = 1,	/* unknown operation */
	NVDLA_VP_BAD_REG = 2,	/* register offset outside reg_space or not aligned */
	NVDLA_VP_BAD_VALUE = 3,	/* ATTACH: an address the carve-out cannot start at */
	NVDLA_VP_REFUSED = 4,	/* STALL or HANG without the host's test hooks */
	NVDLA_VP_PENDING = 0xffff, /* written by the guest, replaced by the host */
};

struct nvdla_vp_entry {
	__le16 op;		/* enum nvdla_vp_op */
	__le16 status;		/* enum nvdla_vp_status, host */
	__le32 reg;		/* byte offset in the register space */
	__le64 value;
};

/* Host counters (nvdla_vp_mailbox.stats), totals since the host started. */
enum nvdla_vp_stat {
	NVDLA_VP_STAT_WRITES,		/* register writes executed */
	NVDLA_VP_STAT_READS,		/* register reads executed */
	NVDLA_VP_STAT_BATCHES,		/* doorbells that found work */
	NVDLA_VP_STAT_INTERRUPTS,	/* MSI-X raised */
	NVDLA_VP_STAT_OPERATIONS,	/* hardware layers completed */
	NVDLA_VP_STAT_DMA_FAULTS,	/* DMA accesses refused (outside memory) */
	NVDLA_VP_STAT_OUTSIDE_CARVEOUT,	/* of those, outside the carve-out */
	NVDLA_VP_STAT_BAD_ENTRIES,	/* ring entries refused */
	NVDLA_VP_STAT_PROTOCOL_ERRORS,	/* bad producer indices */
	NVDLA_VP_STAT_RESETS,		/* RESET entries */
	NVDLA_VP_STAT_PROGRAMMING_ERRORS, /* operations the model could not execute */
	NVDLA_VP_STAT_COUNT
};

#define NVDLA_VP_HOST_TEST_HOOKS 0x1 /* host_flags: STALL and HANG are accepted */

struct nvdla_vp_mailbox {
	/* Written by the host before the guest probes; read-only for the guest. */
	char magic[8];		/* NVDLA_VP_MAILBOX_MAGIC, not NUL-terminated */
	__le32 version;		/* NVDLA_VP_MAILBOX_VERSION */
	__le32 control_size;	/* sizeof(struct nvdla_vp_mailbox) */
	__le32 ring_offset;	/* from the mailbox's start: >= control_size, 64-byte aligned */
	__le32 ring_entries;	/* a power of two, MIN to MAX_RING_ENTRIES */
	__le32 reg_space;	/* bytes of register space the host accepts */
	__le32 host_peer;	/* ivshmem peer id of the host model (0..65535) */
	__le32 doorbell_vector;	/* the host's vector the doorbell names */
	__le32 irq_vector;	/* the guest's MSI-X vector for the NVDLA interrupt */
	__le32 host_flags;	/* NVDLA_VP_HOST_* */
	__le32 reserved0[5];
	/* Guest to host (its own cache line). */
	__le32 producer;	/* entries before this index are published */
	__le32 reserved1[15];
	/* Host to guest. */
	__le32 consumer;	/* entries before this index are done */
	__le32 error;		/* the last protocol error: the producer index it saw */
	__le32 error_count;	/* = stats[NVDLA_VP_STAT_PROTOCOL_ERRORS], low bits */
	__le32 reserved2;
	__le64 stats[14];	/* enum nvdla_vp_stat, current when consumer reaches producer */
};

#define NVDLA_VP_CONTROL_SIZE 256

#endif /* NVDLA_IVSHMEM_H */
