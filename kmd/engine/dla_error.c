// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Error reporting of the DLA engine: a code, the operation, field, value and
 * limit concerned, and one sentence for the embedder's log.
 */
#include "dla_internal.h"

const char *const dla_op_names[NVDLA_DLA_OP_COUNT] = {
	"BDMA", "CONV", "SDP", "PDP", "CDP", "RUBIK",
};

static const char *const code_names[NVDLA_DLA_CODE_COUNT] = {
	[NVDLA_DLA_OK] = "OK",
	[NVDLA_DLA_E_ARGUMENT] = "E_ARGUMENT",
	[NVDLA_DLA_E_VERSION] = "E_VERSION",
	[NVDLA_DLA_E_READ] = "E_READ",
	[NVDLA_DLA_E_COUNT] = "E_COUNT",
	[NVDLA_DLA_E_ADDRESS] = "E_ADDRESS",
	[NVDLA_DLA_E_LIST] = "E_LIST",
	[NVDLA_DLA_E_OP_INDEX] = "E_OP_INDEX",
	[NVDLA_DLA_E_OP_TYPE] = "E_OP_TYPE",
	[NVDLA_DLA_E_EVENT] = "E_EVENT",
	[NVDLA_DLA_E_GRAPH] = "E_GRAPH",
	[NVDLA_DLA_E_LUT_INDEX] = "E_LUT_INDEX",
	[NVDLA_DLA_E_ENUM] = "E_ENUM",
	[NVDLA_DLA_E_FIELD] = "E_FIELD",
	[NVDLA_DLA_E_ALIGN] = "E_ALIGN",
	[NVDLA_DLA_E_STRIDE] = "E_STRIDE",
	[NVDLA_DLA_E_EXTENT] = "E_EXTENT",
	[NVDLA_DLA_E_MEMORY] = "E_MEMORY",
	[NVDLA_DLA_E_UNSUPPORTED] = "E_UNSUPPORTED",
	[NVDLA_DLA_E_STORAGE] = "E_STORAGE",
	[NVDLA_DLA_E_BUSY] = "E_BUSY",
	[NVDLA_DLA_E_STATE] = "E_STATE",
	[NVDLA_DLA_E_TIMEOUT] = "E_TIMEOUT",
	[NVDLA_DLA_E_HARDWARE] = "E_HARDWARE",
};

const char *nvdla_dla_code_name(int code)
{
	if (code < 0 || code >= NVDLA_DLA_CODE_COUNT)
		return "E_UNKNOWN";
	return code_names[code];
}

int dla_code_errno(int code)
{
	switch (code) {
	case NVDLA_DLA_OK:
		return 0;
	case NVDLA_DLA_E_READ:
		return -EPROTO;
	case NVDLA_DLA_E_UNSUPPORTED:
		return -EOPNOTSUPP;
	case NVDLA_DLA_E_STORAGE:
		return -ENOSPC;
	case NVDLA_DLA_E_BUSY:
		return -EBUSY;
	case NVDLA_DLA_E_TIMEOUT:
		return -ETIMEDOUT;
	case NVDLA_DLA_E_HARDWARE:
		return -EIO;
	default:
		return -EINVAL;
	}
}

void dla_clear_error(struct nvdla_dla_error *err)
{
	if (!err)
		return;
	err->code = NVDLA_DLA_OK;
	err->operation = -1;
	err->field = NULL;
	err->value = 0;
	err->limit = 0;
	err->message[0] = '\0';
}

int dla_fail(struct nvdla_dla_error *err, int code, int op, const char *field, u64 value, u64 limit,
	     const char *fmt, ...)
{
	va_list args;
	int used = 0;

	if (!err)
		return dla_code_errno(code);
	err->code = code;
	err->operation = op;
	err->field = field;
	err->value = value;
	err->limit = limit;
	if (op >= 0)
		used = snprintf(err->message, sizeof(err->message), "operation %d: ", op);
	if (used < 0 || (size_t)used >= sizeof(err->message))
		used = 0;
	va_start(args, fmt);
	vsnprintf(err->message + used, sizeof(err->message) - (size_t)used, fmt, args);
	va_end(args);
	return dla_code_errno(code);
}
