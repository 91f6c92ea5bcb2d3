// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * NVDLA on the virtual platform: an ivshmem PCI device whose shared memory
 * carries a header (nvdla_ivshmem.h), the register mailbox to the hardware
 * model on the host (tools/nvdla_vp) and the carve-out. It provides the same
 * hooks as the SoC glue: register access, interrupt, buffer memory, reset.
 *
 * Registers: writes are appended to the mailbox's ring and handed to the
 * host in batches (flush(), which the driver calls before it waits for an
 * interrupt and before a job is seen to end, and which waits until the host
 * has executed them; or when the ring is full); a read appends itself, publishes the
 * ring, rings the doorbell and waits until the host has executed it. The host
 * answers register accesses at once, as hardware does (it computes layers on
 * another thread and raises the interrupt when one is done), so these waits
 * are short and bounded: a poll of NVDLA_VP_SPIN_US, then of short sleeps,
 * NVDLA_VP_ACCESS_TIMEOUT_US in all. The bus sleeps (nvdla_bus_ops.sleeps):
 * the driver calls it from process context only, with interrupts on (the
 * engine takes a mutex and its interrupt is read in the IRQ thread, not the
 * hard IRQ handler). A host that does not answer in time is declared gone:
 * registers read as all ones and writes are dropped at once, the running job
 * fails (nvdla_device_bus_error()) and the reset, which waits longer
 * (NVDLA_VP_RESET_TIMEOUT_MS, sleeping), finds the host again or wedges the
 * device. The model's interrupt arrives as MSI-X; its DMA reaches the
 * carve-out, which lives in the shared memory, so buffers are where the
 * model reads and writes.
 *
 * Without a mailbox (mailbox_size 0) no model is attached: registers read as
 * all ones and writes are dropped, as on a dead bus. A valid job still
 * reaches the engine: it fails to start (-EIO, a register group reads as
 * busy) or, when it starts (BDMA), never completes and times out.
 */
#include <drm/drm_print.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>

#include <nvdla/hw/nvdla_ivshmem.h>

#include "nvdla_compat.h"
#include "nvdla_drv.h"
#include "nvdla_glue.h"

#define NVDLA_IVSHMEM_BAR_REGS 0
#define NVDLA_IVSHMEM_BAR_SHM 2
#define NVDLA_IVSHMEM_IVPOSITION 8	/* BAR0: the device's own peer id */
#define NVDLA_IVSHMEM_DOORBELL 12	/* BAR0: peer << 16 | vector */

/*
 * How long a register access may wait for the host model: it answers at once
 * (a round trip takes microseconds under TCG), but its thread may not run for
 * tens of milliseconds on a loaded host (measured: 20 ms ran out about once
 * in 200 reads at load 16 on 2 cores). Polled without sleeping for the first
 * NVDLA_VP_SPIN_US, then in 10-20 us sleeps up to NVDLA_VP_SHORT_SLEEPS_US,
 * then in 0.5-1 ms sleeps. The reset (and taking the ring over at probe)
 * waits for the host to finish what it is computing:
 * NVDLA_VP_RESET_TIMEOUT_MS, sleeping.
 */
#define NVDLA_VP_SPIN_US 50
#define NVDLA_VP_SHORT_SLEEPS_US 2000
#define NVDLA_VP_ACCESS_TIMEOUT_US 250000
#define NVDLA_VP_RESET_TIMEOUT_MS 10000
#define NVDLA_VP_MAX_HANG_MS 60000

static_assert(sizeof(struct nvdla_ivshmem_header) == 112);
static_assert(sizeof(struct nvdla_vp_mailbox) == NVDLA_VP_CONTROL_SIZE);
static_assert(sizeof(struct nvdla_vp_entry) == 16);
static_assert(sizeof_field(struct nvdla_vp_mailbox, stats) >= NVDLA_VP_STAT_COUNT * sizeof(__le64));

/* What the guest side counts (sysfs vp_stats). */
struct nvdla_vp_counters {
	u64 writes;
	u64 reads;
	u64 flushes;
	u64 doorbells;
	u64 ring_full;
	u64 timeouts;
	u64 read_ns;		/* total time of the reads' round trips */
	u64 read_ns_max;
};

struct nvdla_ivshmem {
	struct pci_dev *pdev;
	struct nvdla_device *ndev;	/* once registered: told about bus errors */
	void __iomem *regs;	/* ivshmem registers: IVPosition, doorbell */
	void *shm;		/* BAR2, write-combined */
	resource_size_t shm_size;
	u64 mailbox_offset;
	u64 mailbox_size;

	/* The register mailbox; mb is NULL without a hardware model. */
	struct nvdla_vp_mailbox *mb;
	struct nvdla_vp_entry *ring;
	u32 ring_entries;
	u32 reg_space;
	u32 doorbell;		/* the value that rings the host */
	u32 host_flags;
	struct mutex lock;	/* the ring and everything below */
	u32 producer;		/* the next entry the guest fills */
	u32 published;		/* the producer index the host has been given */
	bool dead;		/* the host stopped answering */
	struct nvdla_vp_counters count;
};

/* ---- the ring (all under ivs->lock) --------------------------------------- */

static u32 nvdla_vp_consumer(struct nvdla_ivshmem *ivs)
{
	return le32_to_cpu(READ_ONCE(ivs->mb->consumer));
}

/* Hands the entries filled since the last time to the host and rings it. */
static void nvdla_vp_publish(struct nvdla_ivshmem *ivs)
{
	if (ivs->published == ivs->producer)
		return;
	wmb(); /* the entries before the index */
	WRITE_ONCE(ivs->mb->producer, cpu_to_le32(ivs->producer));
	ivs->published = ivs->producer;
	wmb(); /* the index before the doorbell */
	writel(ivs->doorbell, ivs->regs + NVDLA_IVSHMEM_DOORBELL);
	ivs->count.doorbells++;
}

static void nvdla_vp_gone(struct nvdla_ivshmem *ivs, u64 timeout_us)
{
	ivs->dead = true;
	ivs->count.timeouts++;
	dev_err_ratelimited(&ivs->pdev->dev,
			    "the hardware model did not answer within %llu us (consumer %u, producer %u): registers read as all ones until a reset\n",
			    timeout_us, nvdla_vp_consumer(ivs), ivs->published);
	if (ivs->ndev)
		nvdla_device_bus_error(ivs->ndev, -EIO);
}

static bool nvdla_vp_done(struct nvdla_ivshmem *ivs, u32 index)
{
	return (s32)(nvdla_vp_consumer(ivs) - index) >= 0;
}

/*
 * Waits until the host has executed every entry before @index, at most
 * about @timeout_us: a poll without sleeping for NVDLA_VP_SPIN_US (a round
 * trip takes microseconds), then in short sleeps, then in longer ones.
 * Process context.
 */
static bool nvdla_vp_wait(struct nvdla_ivshmem *ivs, u32 index, u64 timeout_us)
{
	bool done;

	might_sleep();
	if (read_poll_timeout_atomic(nvdla_vp_done, done, done, 1, NVDLA_VP_SPIN_US, false, ivs,
				     index) &&
	    read_poll_timeout(nvdla_vp_done, done, done, 20, NVDLA_VP_SHORT_SLEEPS_US, false, ivs,
			      index) &&
	    read_poll_timeout(nvdla_vp_done, done, done, 1000, timeout_us, false, ivs, index)) {
		nvdla_vp_gone(ivs, timeout_us);
		return false;
	}
	rmb(); /* the results after the index */
	return true;
}

/* Room for one more entry: the host must have consumed the oldest. */
static bool nvdla_vp_reserve(struct nvdla_ivshmem *ivs)
{
	if (ivs->dead)
		return false;
	if (ivs->producer - nvdla_vp_consumer(ivs) < ivs->ring_entries)
		return true;
	ivs->count.ring_full++;
	nvdla_vp_publish(ivs);
	return nvdla_vp_wait(ivs, ivs->producer - ivs->ring_entries + 1,
			     NVDLA_VP_ACCESS_TIMEOUT_US);
}

static struct nvdla_vp_entry *nvdla_vp_append(struct nvdla_ivshmem *ivs, u16 op, u32 reg,
					      u64 value)
{
	struct nvdla_vp_entry *e = &ivs->ring[ivs->producer & (ivs->ring_entries - 1)];

	e->op = cpu_to_le16(op);
	e->status = cpu_to_le16(NVDLA_VP_PENDING);
	e->reg = cpu_to_le32(reg);
	e->value = cpu_to_le64(value);
	ivs->producer++;
	return e;
}

/*
 * A synchronous entry: appended after the pending writes, published and
 * waited for (at most @timeout_us). Its status (enum nvdla_vp_status),
 * *value the host's result; -EIO when the host does not answer.
 */
static int nvdla_vp_call(struct nvdla_ivshmem *ivs, u16 op, u32 reg, u64 *value, u64 timeout_us)
{
	struct nvdla_vp_entry *e;
	u32 index;

	if (!nvdla_vp_reserve(ivs))
		return -EIO;
	index = ivs->producer;
	e = nvdla_vp_append(ivs, op, reg, *value);
	nvdla_vp_publish(ivs);
	if (!nvdla_vp_wait(ivs, index + 1, timeout_us))
		return -EIO;
	*value = le64_to_cpu(READ_ONCE(e->value));
	return le16_to_cpu(READ_ONCE(e->status));
}

/*
 * A host declared gone is waited for (sleeping, NVDLA_VP_RESET_TIMEOUT_MS):
 * once it has caught up with everything published it is used again.
 */
static void nvdla_vp_revive(struct nvdla_ivshmem *ivs)
{
	bool done;

	if (!ivs->dead)
		return;
	if (read_poll_timeout(nvdla_vp_done, done, done, 1000, NVDLA_VP_RESET_TIMEOUT_MS * 1000ull,
			      false, ivs, ivs->published))
		return;
	ivs->dead = false;
	dev_info(&ivs->pdev->dev, "the hardware model answers again\n");
}

/* ---- bus hooks ------------------------------------------------------------- */

/* Registers beyond the model's register space are not sent: they read as all ones. */
static bool nvdla_vp_reg_ok(struct nvdla_device *ndev, u32 reg)
{
	struct nvdla_ivshmem *ivs = ndev->bus_priv;

	if (likely(reg % 4 == 0 && reg < ivs->reg_space))
		return true;
	drm_warn_once(&ndev->drm, "register 0x%x is outside the model's %u-byte register space: ignored\n",
		      reg, ivs->reg_space);
	return false;
}

static u32 nvdla_ivshmem_read(struct nvdla_device *ndev, u32 reg)
{
	struct nvdla_ivshmem *ivs = ndev->bus_priv;
	u64 value = 0;
	ktime_t start;
	int status;
	u64 ns;

	if (!ivs->mb) {
		drm_warn_once(&ndev->drm, "no hardware model attached: registers read as all ones\n");
		return ~0u;
	}
	if (!nvdla_vp_reg_ok(ndev, reg))
		return ~0u;
	mutex_lock(&ivs->lock);
	start = ktime_get();
	status = nvdla_vp_call(ivs, NVDLA_VP_OP_READ, reg, &value, NVDLA_VP_ACCESS_TIMEOUT_US);
	ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	ivs->count.reads++;
	ivs->count.read_ns += ns;
	ivs->count.read_ns_max = max(ivs->count.read_ns_max, ns);
	mutex_unlock(&ivs->lock);

	if (status) {
		if (status > 0)
			drm_err_ratelimited(&ndev->drm,
					    "register 0x%x: the hardware model refused the read (%d)\n",
					    reg, status);
		return ~0u;
	}
	return (u32)value;
}

static void nvdla_ivshmem_write(struct nvdla_device *ndev, u32 reg, u32 val)
{
	struct nvdla_ivshmem *ivs = ndev->bus_priv;

	if (!ivs->mb) {
		drm_warn_once(&ndev->drm, "no hardware model attached: register writes are dropped\n");
		return;
	}
	if (!nvdla_vp_reg_ok(ndev, reg))
		return;
	mutex_lock(&ivs->lock);
	if (nvdla_vp_reserve(ivs)) {
		nvdla_vp_append(ivs, NVDLA_VP_OP_WRITE, reg, val);
		ivs->count.writes++;
	}
	mutex_unlock(&ivs->lock);
}

static void nvdla_ivshmem_flush(struct nvdla_device *ndev)
{
	struct nvdla_ivshmem *ivs = ndev->bus_priv;

	if (!ivs->mb)
		return;
	mutex_lock(&ivs->lock);
	if (!ivs->dead) {
		nvdla_vp_publish(ivs);
		/*
		 * Executed, not only published (the bus sleeps): a job is seen to
		 * end only after its last register write took effect.
		 */
		nvdla_vp_wait(ivs, ivs->producer, NVDLA_VP_ACCESS_TIMEOUT_US);
		ivs->count.flushes++;
	}
	mutex_unlock(&ivs->lock);
}

/*
 * The accelerator's reset: the model returns to its power-on state (and
 * stops stalling). It waits for what the model is computing (the model
 * refuses that computation's DMA from the reset on).
 */
static int nvdla_ivshmem_reset(struct nvdla_device *ndev)
{
	struct nvdla_ivshmem *ivs = ndev->bus_priv;
	u64 value = 0;
	int status;

	if (!ivs->mb)
		return 0;
	mutex_lock(&ivs->lock);
	nvdla_vp_revive(ivs);
	status = nvdla_vp_call(ivs, NVDLA_VP_OP_RESET, 0, &value,
			       NVDLA_VP_RESET_TIMEOUT_MS * 1000ull);
	mutex_unlock(&ivs->lock);
	return status ? -EIO : 0;
}

static const struct nvdla_bus_ops nvdla_ivshmem_bus_ops = {
	.name = "ivshmem",
	.sleeps = true,
	.read = nvdla_ivshmem_read,
	.write = nvdla_ivshmem_write,
	.reset = nvdla_ivshmem_reset,
	.flush = nvdla_ivshmem_flush,
};

/* ---- sysfs: counters and the fault-injection hook ------------------------ */

static ssize_t vp_stats_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	static const char * const host_names[NVDLA_VP_STAT_COUNT] = {
		[NVDLA_VP_STAT_WRITES] = "host_register_writes",
		[NVDLA_VP_STAT_READS] = "host_register_reads",
		[NVDLA_VP_STAT_BATCHES] = "host_batches",
		[NVDLA_VP_STAT_INTERRUPTS] = "host_interrupts",
		[NVDLA_VP_STAT_OPERATIONS] = "host_operations",
		[NVDLA_VP_STAT_DMA_FAULTS] = "host_dma_faults",
		[NVDLA_VP_STAT_OUTSIDE_CARVEOUT] = "host_outside_carveout",
		[NVDLA_VP_STAT_BAD_ENTRIES] = "host_bad_entries",
		[NVDLA_VP_STAT_PROTOCOL_ERRORS] = "host_protocol_errors",
		[NVDLA_VP_STAT_RESETS] = "host_resets",
		[NVDLA_VP_STAT_PROGRAMMING_ERRORS] = "host_programming_errors",
	};
	struct nvdla_device *ndev = dev_get_drvdata(dev);
	struct nvdla_ivshmem *ivs = ndev->bus_priv;
	struct nvdla_vp_counters c;
	int len, i;

	if (!ivs->mb)
		return -ENODEV;
	mutex_lock(&ivs->lock);
	c = ivs->count;
	mutex_unlock(&ivs->lock);

	len = sysfs_emit(buf,
			 "writes %llu\nreads %llu\nflushes %llu\ndoorbells %llu\nring_full %llu\ntimeouts %llu\nread_ns_avg %llu\nread_ns_max %llu\n",
			 c.writes, c.reads, c.flushes, c.doorbells, c.ring_full, c.timeouts,
			 c.reads ? div64_u64(c.read_ns, c.reads) : 0, c.read_ns_max);
	for (i = 0; i < NVDLA_VP_STAT_COUNT; i++)
		len += sysfs_emit_at(buf, len, "%s %llu\n", host_names[i],
				     le64_to_cpu(READ_ONCE(ivs->mb->stats[i])));
	return len;
}
static DEVICE_ATTR_RO(vp_stats);

/*
 * Measurement: 64 empty round trips to the model (a NOP entry published,
 * the doorbell rung, the consumer index spun on), their average, minimum
 * and maximum time.
 */
static ssize_t vp_ping_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct nvdla_device *ndev = dev_get_drvdata(dev);
	struct nvdla_ivshmem *ivs = ndev->bus_priv;
	u64 total = 0, lo = U64_MAX, hi = 0, ns, value;
	ktime_t start;
	int i, status;

	if (!ivs->mb)
		return -ENODEV;
	for (i = 0; i < 64; i++) {
		mutex_lock(&ivs->lock);
		start = ktime_get();
		value = 0;
		status = nvdla_vp_call(ivs, NVDLA_VP_OP_NOP, 0, &value, NVDLA_VP_ACCESS_TIMEOUT_US);
		ns = ktime_to_ns(ktime_sub(ktime_get(), start));
		mutex_unlock(&ivs->lock);
		if (status)
			return -EIO;
		total += ns;
		lo = min(lo, ns);
		hi = max(hi, ns);
	}
	return sysfs_emit(buf, "round_trips 64\navg_ns %llu\nmin_ns %llu\nmax_ns %llu\n",
			  div64_u64(total, 64), lo, hi);
}
static DEVICE_ATTR_ADMIN_RO(vp_ping); /* it makes the model busy: root only */

/*
 * Test hook: "1" makes the model hold every operation back until the next
 * reset, so the running or next job times out. Refused (EPERM) unless the
 * host model was started with its test hooks.
 */
static ssize_t vp_stall_store(struct device *dev, struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct nvdla_device *ndev = dev_get_drvdata(dev);
	struct nvdla_ivshmem *ivs = ndev->bus_priv;
	u64 value = 0;
	bool stall;
	int status;

	if (!ivs->mb)
		return -ENODEV;
	if (kstrtobool(buf, &stall))
		return -EINVAL;
	if (!stall)
		return count;
	mutex_lock(&ivs->lock);
	status = nvdla_vp_call(ivs, NVDLA_VP_OP_STALL, 0, &value, NVDLA_VP_ACCESS_TIMEOUT_US);
	mutex_unlock(&ivs->lock);
	if (status == NVDLA_VP_REFUSED)
		return -EPERM;
	if (status)
		return -EIO;
	dev_info(dev, "the hardware model stalls until the next reset (test hook)\n");
	return count;
}
static DEVICE_ATTR_WO(vp_stall);

/*
 * Test hook: "MS" makes the model stop answering for MS milliseconds (its
 * serving thread sleeps), as a host that hangs: the next register access
 * times out and the job fails. Not waited for. Refused (EPERM) unless the
 * host model was started with its test hooks.
 */
static ssize_t vp_hang_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t count)
{
	struct nvdla_device *ndev = dev_get_drvdata(dev);
	struct nvdla_ivshmem *ivs = ndev->bus_priv;
	unsigned int ms;
	int ret = count;

	if (!ivs->mb)
		return -ENODEV;
	if (!(ivs->host_flags & NVDLA_VP_HOST_TEST_HOOKS))
		return -EPERM;
	if (kstrtouint(buf, 0, &ms) || !ms || ms > NVDLA_VP_MAX_HANG_MS)
		return -EINVAL;
	mutex_lock(&ivs->lock);
	if (nvdla_vp_reserve(ivs)) {
		nvdla_vp_append(ivs, NVDLA_VP_OP_HANG, 0, ms);
		nvdla_vp_publish(ivs);
	} else {
		ret = -EIO;
	}
	mutex_unlock(&ivs->lock);
	if (ret > 0)
		dev_info(dev, "the hardware model stops answering for %u ms (test hook)\n", ms);
	return ret;
}
static DEVICE_ATTR_WO(vp_hang);

static struct attribute *nvdla_ivshmem_attrs[] = {
	&dev_attr_vp_stats.attr,
	&dev_attr_vp_stall.attr,
	&dev_attr_vp_hang.attr,
	&dev_attr_vp_ping.attr,
	NULL,
};
ATTRIBUTE_GROUPS(nvdla_ivshmem);

/* ---- probe ------------------------------------------------------------------ */

static bool nvdla_ivshmem_range_ok(u64 offset, u64 size, u64 limit)
{
	return offset <= limit && size <= limit - offset;
}

/* Reads and checks the header the host wrote; the configuration it names. */
static const struct nvdla_hw_config *nvdla_ivshmem_header(struct device *dev,
							  struct nvdla_ivshmem *ivs,
							  u64 *mem_offset, u64 *mem_size)
{
	struct nvdla_ivshmem_header hdr;
	const struct nvdla_hw_config *config;

	if (ivs->shm_size < PAGE_SIZE)
		return ERR_PTR(-ENODEV);
	memcpy(&hdr, ivs->shm, sizeof(hdr));
	if (memcmp(hdr.magic, NVDLA_IVSHMEM_MAGIC, sizeof(hdr.magic))) {
		dev_info(dev, "ivshmem without an NVDLA header: not an NVDLA virtual platform\n");
		return ERR_PTR(-ENODEV);
	}
	if (le32_to_cpu(hdr.version) != NVDLA_IVSHMEM_VERSION ||
	    le32_to_cpu(hdr.header_size) < sizeof(hdr) || hdr.flags) {
		dev_err(dev, "NVDLA ivshmem header version %u (size %u, flags %#x) is not supported\n",
			le32_to_cpu(hdr.version), le32_to_cpu(hdr.header_size),
			le32_to_cpu(hdr.flags));
		return ERR_PTR(-EINVAL);
	}

	hdr.config[sizeof(hdr.config) - 1] = '\0';
	config = nvdla_hw_config_find(hdr.config);
	if (!config) {
		dev_err(dev, "NVDLA ivshmem header names an unknown configuration \"%s\"\n",
			hdr.config);
		return ERR_PTR(-EINVAL);
	}

	ivs->mailbox_offset = le64_to_cpu(hdr.mailbox_offset);
	ivs->mailbox_size = le64_to_cpu(hdr.mailbox_size);
	*mem_offset = le64_to_cpu(hdr.memory_offset);
	*mem_size = le64_to_cpu(hdr.memory_size);
	if (!nvdla_ivshmem_range_ok(ivs->mailbox_offset, ivs->mailbox_size, ivs->shm_size) ||
	    !nvdla_ivshmem_range_ok(*mem_offset, *mem_size, ivs->shm_size) ||
	    (*mem_size && *mem_offset < PAGE_SIZE)) {
		dev_err(dev, "NVDLA ivshmem header: regions outside the %llu-byte shared memory\n",
			(u64)ivs->shm_size);
		return ERR_PTR(-EINVAL);
	}
	if (ivs->mailbox_size &&
	    (!PAGE_ALIGNED(ivs->mailbox_offset) || ivs->mailbox_offset < PAGE_SIZE ||
	     (*mem_size && ivs->mailbox_offset < *mem_offset + *mem_size &&
	      *mem_offset < ivs->mailbox_offset + ivs->mailbox_size))) {
		dev_err(dev, "NVDLA ivshmem header: the mailbox is misplaced\n");
		return ERR_PTR(-EINVAL);
	}
	return config;
}

/* Checks the mailbox the host model wrote and takes over its ring. */
static int nvdla_ivshmem_mailbox(struct pci_dev *pdev, struct nvdla_ivshmem *ivs, u64 mem_size,
				 u32 *irq_vector)
{
	struct device *dev = &pdev->dev;
	struct nvdla_vp_mailbox *mb = ivs->shm + ivs->mailbox_offset;
	u32 control, ring_offset, entries, peer, vector, start;
	int msix = pci_msix_vec_count(pdev);
	ktime_t deadline;

	if (ivs->mailbox_size < NVDLA_VP_CONTROL_SIZE ||
	    memcmp(mb->magic, NVDLA_VP_MAILBOX_MAGIC, sizeof(mb->magic))) {
		dev_err(dev, "NVDLA ivshmem: no register mailbox at offset %llu\n",
			ivs->mailbox_offset);
		return -EINVAL;
	}
	if (le32_to_cpu(mb->version) != NVDLA_VP_MAILBOX_VERSION) {
		dev_err(dev, "NVDLA register mailbox version %u is not supported (%u is)\n",
			le32_to_cpu(mb->version), NVDLA_VP_MAILBOX_VERSION);
		return -EINVAL;
	}
	control = le32_to_cpu(mb->control_size);
	ring_offset = le32_to_cpu(mb->ring_offset);
	entries = le32_to_cpu(mb->ring_entries);
	peer = le32_to_cpu(mb->host_peer);
	vector = le32_to_cpu(mb->doorbell_vector);
	*irq_vector = le32_to_cpu(mb->irq_vector);
	if (control < sizeof(*mb) || ring_offset < control || ring_offset % 64 ||
	    !is_power_of_2(entries) || entries < NVDLA_VP_MIN_RING_ENTRIES ||
	    entries > NVDLA_VP_MAX_RING_ENTRIES ||
	    (u64)ring_offset + (u64)entries * sizeof(struct nvdla_vp_entry) > ivs->mailbox_size ||
	    peer > 0xffff || vector > 0xffff) {
		dev_err(dev, "NVDLA register mailbox: bad layout (ring of %u entries at %u, peer %u vector %u)\n",
			entries, ring_offset, peer, vector);
		return -EINVAL;
	}
	/* The doorbell and the interrupt are ivshmem-doorbell's; ivshmem-plain has neither. */
	if (msix <= 0 || *irq_vector >= msix) {
		dev_err(dev, "NVDLA register mailbox: needs ivshmem-doorbell with MSI-X vector %u (the device has %d vectors)\n",
			*irq_vector, max(msix, 0));
		return -EINVAL;
	}
	/* The model's DMA reaches the shared memory only. */
	if (!mem_size) {
		dev_err(dev, "NVDLA register mailbox without a carve-out: the hardware model cannot reach guest memory\n");
		return -EINVAL;
	}

	ivs->mb = mb;
	ivs->ring = (void *)mb + ring_offset;
	ivs->ring_entries = entries;
	ivs->reg_space = le32_to_cpu(mb->reg_space);
	ivs->doorbell = peer << 16 | vector;
	ivs->host_flags = le32_to_cpu(mb->host_flags);
	mutex_init(&ivs->lock);

	/* A previous driver may have left entries the host has not finished: wait for them. */
	start = le32_to_cpu(READ_ONCE(mb->producer));
	deadline = ktime_add_ms(ktime_get(), NVDLA_VP_RESET_TIMEOUT_MS);
	while (nvdla_vp_consumer(ivs) != start) {
		if (ktime_after(ktime_get(), deadline)) {
			dev_err(dev, "NVDLA register mailbox: the hardware model does not answer\n");
			return -ETIMEDOUT;
		}
		usleep_range(100, 1000);
	}
	ivs->producer = start;
	ivs->published = start;
	dev_info(dev, "NVDLA register mailbox: ring of %u entries, host peer %u, this device peer %u\n",
		 entries, peer, readl(ivs->regs + NVDLA_IVSHMEM_IVPOSITION));
	return 0;
}

/* Tells the model where the carve-out is (its device addresses) and resets it. */
static int nvdla_ivshmem_attach(struct device *dev, struct nvdla_ivshmem *ivs, dma_addr_t base)
{
	u64 value = base;
	int status;

	mutex_lock(&ivs->lock);
	status = nvdla_vp_call(ivs, NVDLA_VP_OP_ATTACH, 0, &value,
			       NVDLA_VP_RESET_TIMEOUT_MS * 1000ull);
	if (!status) {
		value = 0;
		status = nvdla_vp_call(ivs, NVDLA_VP_OP_RESET, 0, &value,
				       NVDLA_VP_RESET_TIMEOUT_MS * 1000ull);
	}
	mutex_unlock(&ivs->lock);
	if (status) {
		dev_err(dev, "the hardware model refused the carve-out at device address %pad (%d)\n",
			&base, status);
		return -EINVAL;
	}
	return 0;
}

static int nvdla_ivshmem_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	const struct nvdla_hw_config *config;
	struct nvdla_ivshmem *ivs;
	struct nvdla_device *ndev;
	u64 mem_offset, mem_size;
	resource_size_t shm_start;
	dma_addr_t mem_dma = 0;
	u32 irq_vector = 0;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;

	ivs = devm_kzalloc(dev, sizeof(*ivs), GFP_KERNEL);
	if (!ivs)
		return -ENOMEM;
	ivs->pdev = pdev;

	ret = nvdla_compat_pcim_request_region(pdev, NVDLA_IVSHMEM_BAR_REGS, "nvdla");
	if (ret)
		return ret;
	ivs->regs = pcim_iomap(pdev, NVDLA_IVSHMEM_BAR_REGS, 0);
	if (!ivs->regs)
		return -ENOMEM;

	/* The shared memory is mapped write-combined, not through pcim_iomap (uncached). */
	ret = nvdla_compat_pcim_request_region(pdev, NVDLA_IVSHMEM_BAR_SHM, "nvdla");
	if (ret)
		return ret;
	shm_start = pci_resource_start(pdev, NVDLA_IVSHMEM_BAR_SHM);
	ivs->shm_size = pci_resource_len(pdev, NVDLA_IVSHMEM_BAR_SHM);
	ivs->shm = devm_memremap(dev, shm_start, ivs->shm_size, MEMREMAP_WC);
	if (IS_ERR(ivs->shm))
		return PTR_ERR(ivs->shm);

	config = nvdla_ivshmem_header(dev, ivs, &mem_offset, &mem_size);
	if (IS_ERR(config))
		return PTR_ERR(config);

	if (ivs->mailbox_size) {
		ret = nvdla_ivshmem_mailbox(pdev, ivs, mem_size, &irq_vector);
		if (ret)
			return ret;
	}

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(min(config->address_bits, 64u)));
	if (ret)
		return dev_err_probe(dev, ret, "cannot use %u-bit DMA\n", config->address_bits);

	ndev = nvdla_device_alloc(dev, config);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->bus = &nvdla_ivshmem_bus_ops;
	ndev->bus_priv = ivs;
	pci_set_drvdata(pdev, ndev);

	if (mem_size) {
		mem_dma = pci_bus_address(pdev, NVDLA_IVSHMEM_BAR_SHM) + mem_offset;
		ret = nvdla_mem_init_carveout(ndev, shm_start + mem_offset, mem_dma, mem_size);
		if (ret)
			return ret;
	}

	/*
	 * ivshmem-doorbell interrupts the guest through MSI-X, ivshmem-plain
	 * cannot. An MSI is a memory write of the device: bus mastering on.
	 */
	if (pci_msix_vec_count(pdev) > 0) {
		pci_set_master(pdev);
		ret = pci_alloc_irq_vectors(pdev, irq_vector + 1, irq_vector + 1, PCI_IRQ_MSIX);
		if (ret < 0)
			return ret;
		ndev->irq = pci_irq_vector(pdev, irq_vector);
	}

	if (ivs->mb) {
		ret = nvdla_ivshmem_attach(dev, ivs, mem_dma);
		if (ret)
			return ret;
		dev_info(dev, "hardware model attached: carve-out at device address %pad\n",
			 &mem_dma);
	} else {
		dev_info(dev, "no hardware model attached: jobs fail or time out\n");
	}

	ivs->ndev = ndev;
	return nvdla_device_register(ndev);
}

static void nvdla_ivshmem_remove(struct pci_dev *pdev)
{
	nvdla_device_unregister(pci_get_drvdata(pdev));
}

/*
 * No MODULE_DEVICE_TABLE: ivshmem is a generic device, so the module is not
 * loaded automatically for it; devices without the NVDLA header are refused.
 */
static const struct pci_device_id nvdla_ivshmem_ids[] = {
	{ PCI_DEVICE(NVDLA_IVSHMEM_VENDOR, NVDLA_IVSHMEM_DEVICE) },
	{ }
};

static struct pci_driver nvdla_ivshmem_driver = {
	.name = "nvdla-ivshmem",
	.id_table = nvdla_ivshmem_ids,
	.probe = nvdla_ivshmem_probe,
	.remove = nvdla_ivshmem_remove,
	.dev_groups = nvdla_ivshmem_groups,
};

int nvdla_ivshmem_register(void)
{
	return pci_register_driver(&nvdla_ivshmem_driver);
}

void nvdla_ivshmem_unregister(void)
{
	pci_unregister_driver(&nvdla_ivshmem_driver);
}
