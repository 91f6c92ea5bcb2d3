// Image decoding (PGM/PPM here, PNG with libpng, JPEG with libjpeg-turbo) and conversion into
// an input tensor. docs/images.md.
//
// libpng and libjpeg report fatal errors by longjmp. Each setjmp here sits in a small function
// that has no automatic object with a non-trivial destructor, and the only frames a longjmp
// crosses are the libraries' and our callbacks' (which have none either), so no C++ object is
// skipped; buffers are allocated by the callers, outside those functions.
#include "runtime/image.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csetjmp>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "nvdla/formats/feature.hpp"
#include "nvdla/formats/pixel.hpp"

namespace nvdla::runtime {

std::string_view to_string(ImageFileType t) {
    switch (t) {
        case ImageFileType::Pnm: return "PNM";
        case ImageFileType::Png: return "PNG";
        case ImageFileType::Jpeg: return "JPEG";
    }
    return "?";
}

std::string_view to_string(InputFormat f) {
    switch (f) {
        case InputFormat::R8: return "R8";
        case InputFormat::A16B16G16R16_F: return "A16B16G16R16_F";
        case InputFormat::A8B8G8R8: return "A8B8G8R8";
        case InputFormat::Feature: return "FEATURE";
        case InputFormat::FeatureX8: return "FEATURE_X8";
    }
    return "?";
}

namespace {

std::string channel_names(const Image& image) {
    const bool rgb = image.order == ColorOrder::Rgb;
    switch (image.channels) {
        case 1: return "grey";
        case 2: return "grey+alpha";
        case 3: return rgb ? "RGB" : "BGR";
        case 4: return rgb ? "RGBA" : "BGRA";
        default: return std::to_string(image.channels) + "-channel";
    }
}

uint32_t bits_for(uint32_t max_value) {
    return static_cast<uint32_t>(std::bit_width(max_value));
}

// Checks the extents a header announced, before anything is allocated for them.
Status check_extent(std::string_view format, uint64_t width, uint64_t height,
                    const ImageDecodeOptions& options) {
    if (width == 0 || height == 0)
        return error(format, ": the image is ", width, " x ", height, " pixels (an extent is 0)");
    if (width > options.max_extent || height > options.max_extent)
        return error(format, ": the image is ", width, " x ", height, " pixels; the limit is ",
                     options.max_extent, " x ", options.max_extent);
    return {};
}

// ---- PGM / PPM ------------------------------------------------------------------------------

bool is_pnm_space(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

class PnmScanner {
  public:
    explicit PnmScanner(ConstByteSpan bytes) : bytes_(bytes) {}

    size_t position() const { return pos_; }
    size_t remaining() const { return bytes_.size() - pos_; }
    uint8_t byte_at(size_t i) const { return std::to_integer<uint8_t>(bytes_[i]); }

    // Skips whitespace and '#' comments (to the end of the line).
    void skip_space() {
        while (pos_ < bytes_.size()) {
            const uint8_t c = byte_at(pos_);
            if (c == '#') {
                while (pos_ < bytes_.size() && byte_at(pos_) != '\n' && byte_at(pos_) != '\r')
                    ++pos_;
            } else if (is_pnm_space(c)) {
                ++pos_;
            } else {
                return;
            }
        }
    }

    // Reads a decimal number of at most `limit`; the error names `what`.
    Result<uint32_t> number(const char* what, uint64_t limit) {
        skip_space();
        if (pos_ >= bytes_.size()) return error("the file ends before the ", what);
        if (!std::isdigit(byte_at(pos_)))
            return error("the ", what, " is not a decimal number (found byte 0x", std::hex,
                         unsigned(byte_at(pos_)), std::dec, " at offset ", pos_, ")");
        uint64_t v = 0;
        while (pos_ < bytes_.size() && std::isdigit(byte_at(pos_))) {
            v = v * 10 + (byte_at(pos_) - '0');
            ++pos_;
            if (v > limit) return error("the ", what, " is larger than ", limit);
        }
        if (pos_ < bytes_.size() && !is_pnm_space(byte_at(pos_)) && byte_at(pos_) != '#')
            return error("the ", what, " is followed by byte 0x", std::hex, unsigned(byte_at(pos_)),
                         std::dec, " at offset ", pos_, " instead of whitespace");
        return static_cast<uint32_t>(v);
    }

    void advance(size_t n) { pos_ += n; }

  private:
    ConstByteSpan bytes_;
    size_t pos_ = 0;
};

Result<Image> decode_pnm(ConstByteSpan file, const ImageDecodeOptions& options) {
    const char kind = static_cast<char>(std::to_integer<uint8_t>(file[1]));
    std::string format = std::string("P") + kind;
    switch (kind) {
        case '2':
        case '5': format = "PGM (" + format + ")"; break;
        case '3':
        case '6': format = "PPM (" + format + ")"; break;
        case '1':
        case '4':
            return error("PBM (", format, ", 1-bit) images are not supported: use PGM, PPM, ",
                         "PNG or JPEG");
        case '7': return error("PAM (P7) images are not supported: use PGM, PPM, PNG or JPEG");
        default: return error("not an image: 'P' followed by byte 0x", std::hex, unsigned(kind));
    }
    const bool ascii = kind == '2' || kind == '3';
    const uint32_t channels = (kind == '3' || kind == '6') ? 3 : 1;

    PnmScanner in(file);
    in.advance(2);
    if (in.remaining() > 0 && !is_pnm_space(in.byte_at(2)) && in.byte_at(2) != '#')
        return error(format, ": header: the magic number is not followed by whitespace");
    // Larger than any accepted extent but small enough to show in a message.
    constexpr uint64_t kHeaderNumberLimit = 0xffffffffu;
    Result<uint32_t> width = in.number("width", kHeaderNumberLimit);
    if (!width) return width.status().context(format + ": header");
    Result<uint32_t> height = in.number("height", kHeaderNumberLimit);
    if (!height) return height.status().context(format + ": header");
    if (Status s = check_extent(format, *width, *height, options); !s) return s;
    Result<uint32_t> maxval = in.number("maxval", kHeaderNumberLimit);
    if (!maxval) return maxval.status().context(format + ": header");
    if (*maxval == 0 || *maxval > 65535)
        return error(format, ": maxval ", *maxval,
                     " is not supported (1 to 255 for 8-bit samples, 256 to 65535 for 16-bit)");

    Image image;
    image.type = ImageFileType::Pnm;
    image.width = *width;
    image.height = *height;
    image.channels = channels;
    image.max_value = *maxval;
    image.order = options.order;
    const uint64_t count = uint64_t(*width) * *height * channels;
    // PPM stores R, G, B: sample i goes to the same pixel, channel 2 - c for BGR.
    const bool swap = channels == 3 && options.order == ColorOrder::Bgr;
    auto sample_index = [swap](uint64_t i) -> size_t {
        return static_cast<size_t>(swap ? i - i % 3 + (2 - i % 3) : i);
    };

    if (ascii) {
        // Each sample takes a digit and a separator (the last needs no separator).
        if (in.remaining() < 2 * count - 1)
            return error(format, ": truncated: ", count, " samples need at least ", 2 * count - 1,
                         " bytes, the file has ", in.remaining(), " after the header");
        image.samples.resize(count);
        for (uint64_t i = 0; i < count; ++i) {
            Result<uint32_t> v = in.number("sample", kHeaderNumberLimit);
            if (!v) {
                return error(format, ": sample ", i, " of ", count, " (pixel ",
                             (i / channels) % *width, ", ", i / channels / *width,
                             "): ", v.message());
            }
            if (*v > *maxval)
                return error(format, ": sample ", i, " (pixel ", (i / channels) % *width, ", ",
                             i / channels / *width, ") is ", *v, ", above maxval ", *maxval);
            image.samples[sample_index(i)] = static_cast<uint16_t>(*v);
        }
    } else {
        // Exactly one whitespace byte separates maxval from the raster.
        if (in.remaining() == 0)
            return error(format, ": the file ends after the header (no raster)");
        if (!is_pnm_space(in.byte_at(in.position())))
            return error(format, ": header: maxval is not followed by a single whitespace byte");
        in.advance(1);
        const uint32_t bytes_per_sample = *maxval > 255 ? 2 : 1;
        const uint64_t need = count * bytes_per_sample;
        if (in.remaining() < need)
            return error(format, ": truncated: the raster of ", *width, " x ", *height, " x ",
                         channels, " samples needs ", need, " bytes, the file has ", in.remaining(),
                         " after the header");
        image.samples.resize(count);
        const size_t base = in.position();
        for (uint64_t i = 0; i < count; ++i) {
            uint32_t v = in.byte_at(base + i * bytes_per_sample);
            if (bytes_per_sample == 2) v = (v << 8) | in.byte_at(base + i * 2 + 1);
            if (v > *maxval)
                return error(format, ": sample ", i, " (pixel ", (i / channels) % *width, ", ",
                             i / channels / *width, ") is ", v, ", above maxval ", *maxval);
            image.samples[sample_index(i)] = static_cast<uint16_t>(v);
        }
        // Bytes after the raster (a further image of a multi-image file) are ignored.
    }
    return image;
}

// ---- PNG ------------------------------------------------------------------------------------

struct PngContext {
    const unsigned char* data = nullptr;
    size_t size = 0;
    size_t pos = 0;
    char message[256] = {};
};

void png_read_callback(png_structp png, png_bytep out, size_t n) {
    auto* ctx = static_cast<PngContext*>(png_get_io_ptr(png));
    if (n > ctx->size - ctx->pos) png_error(png, "truncated file");
    std::memcpy(out, ctx->data + ctx->pos, n);
    ctx->pos += n;
}

void png_error_callback(png_structp png, png_const_charp message) {
    auto* ctx = static_cast<PngContext*>(png_get_error_ptr(png));
    std::snprintf(ctx->message, sizeof(ctx->message), "%s", message ? message : "error");
    png_longjmp(png, 1);
}

void png_warning_callback(png_structp, png_const_charp) {}

struct PngHeader {
    uint32_t width = 0, height = 0, channels = 0, bit_depth = 0;
    size_t row_bytes = 0;
};

// Reads the chunks up to the image data and sets the transforms: palette to RGB, grey below
// 8 bits to 8, alpha (or tRNS) kept or stripped. 0, or 1 with ctx->message set.
int png_read_header(png_structp png, png_infop info, bool keep_alpha, PngHeader* out) {
    if (setjmp(png_jmpbuf(png))) return 1;
    png_read_info(png, info);
    const int color_type = png_get_color_type(png, info);
    const int depth = png_get_bit_depth(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS) && keep_alpha) png_set_tRNS_to_alpha(png);
    // Palette expansion turns tRNS into alpha by itself: strip that too unless it is kept.
    if (((color_type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS)) &&
        !keep_alpha)
        png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    out->width = png_get_image_width(png, info);
    out->height = png_get_image_height(png, info);
    out->channels = png_get_channels(png, info);
    out->bit_depth = png_get_bit_depth(png, info);
    out->row_bytes = png_get_rowbytes(png, info);
    return 0;
}

// Reads the rows and the chunks after them (checking their CRCs). 0, or 1 with ctx->message.
int png_read_rows(png_structp png, png_infop info, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return 1;
    png_read_image(png, rows);
    png_read_end(png, info);
    return 0;
}

uint32_t be32(const unsigned char* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

Result<Image> decode_png(ConstByteSpan file, const ImageDecodeOptions& options) {
    const auto* data = reinterpret_cast<const unsigned char*>(file.data());
    // The IHDR chunk comes first: its extents are checked before libpng allocates anything.
    if (file.size() < 33) return error("PNG: truncated: ", file.size(), " bytes, no IHDR chunk");
    if (std::memcmp(data + 12, "IHDR", 4) != 0) return error("PNG: the first chunk is not IHDR");
    if (Status s = check_extent("PNG", be32(data + 16), be32(data + 20), options); !s) return s;

    PngContext ctx;
    ctx.data = data;
    ctx.size = file.size();
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_callback,
                                             png_warning_callback);
    if (png == nullptr) return error("PNG: libpng could not be initialised");
    png_infop info = png_create_info_struct(png);
    struct Destroy {
        png_structp* png;
        png_infop* info;
        ~Destroy() { png_destroy_read_struct(png, info, nullptr); }
    } destroy{&png, &info};
    if (info == nullptr) return error("PNG: libpng could not be initialised");
    png_set_read_fn(png, &ctx, png_read_callback);
    png_set_user_limits(png, options.max_extent, options.max_extent);

    PngHeader header;
    if (png_read_header(png, info, options.keep_alpha, &header) != 0)
        return error("PNG: ", ctx.message);
    if (header.bit_depth != 8 && header.bit_depth != 16)
        return error("PNG: unsupported bit depth ", header.bit_depth);
    const uint32_t bytes_per_sample = header.bit_depth / 8;
    if (header.row_bytes != size_t(header.width) * header.channels * bytes_per_sample)
        return error("PNG: unexpected row size ", header.row_bytes, " for ", header.width,
                     " pixels of ", header.channels, " channels");

    std::vector<unsigned char> pixels(header.row_bytes * header.height);
    std::vector<png_bytep> rows(header.height);
    for (uint32_t y = 0; y < header.height; ++y) rows[y] = pixels.data() + y * header.row_bytes;
    if (png_read_rows(png, info, rows.data()) != 0) return error("PNG: ", ctx.message);

    Image image;
    image.type = ImageFileType::Png;
    image.width = header.width;
    image.height = header.height;
    image.channels = header.channels;
    image.max_value = header.bit_depth == 16 ? 65535 : 255;
    image.order = options.order;
    // PNG stores colour as R, G, B (then alpha).
    const bool swap = options.order == ColorOrder::Bgr && header.channels >= 3;
    image.samples.resize(size_t(header.width) * header.height * header.channels);
    size_t i = 0;
    for (uint32_t y = 0; y < header.height; ++y) {
        const unsigned char* row = rows[y];
        for (uint32_t x = 0; x < header.width; ++x) {
            for (uint32_t c = 0; c < header.channels; ++c) {
                const uint32_t from = swap && c < 3 ? 2 - c : c;
                const unsigned char* p =
                    row + (size_t(x) * header.channels + from) * bytes_per_sample;
                image.samples[i++] = static_cast<uint16_t>(
                    bytes_per_sample == 2 ? (uint32_t(p[0]) << 8) | p[1] : p[0]);
            }
        }
    }
    return image;
}

// ---- JPEG -----------------------------------------------------------------------------------

// Scans a progressive JPEG may have before it is refused (each scan passes over the whole
// image: a small file with many scans could take minutes). libjpeg-turbo's tools use 500.
constexpr int kMaxJpegScans = 1000;

struct JpegContext {
    jpeg_error_mgr error;  // first: libjpeg hands back a pointer to it
    jpeg_progress_mgr progress;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    char warning[JMSG_LENGTH_MAX];
    bool warned;
};
static_assert(std::is_standard_layout_v<JpegContext>);

JpegContext* jpeg_context(j_common_ptr cinfo) {
    return reinterpret_cast<JpegContext*>(cinfo->err);
}

void jpeg_error_exit_callback(j_common_ptr cinfo) {
    JpegContext* ctx = jpeg_context(cinfo);
    (*cinfo->err->format_message)(cinfo, ctx->message);
    std::longjmp(ctx->jump, 1);
}

// Warnings (level -1) mean corrupt data that libjpeg decoded anyway, e.g. a truncated file
// padded with grey; the first is kept and the image refused. Trace messages are dropped.
void jpeg_emit_message_callback(j_common_ptr cinfo, int level) {
    JpegContext* ctx = jpeg_context(cinfo);
    if (level < 0 && !ctx->warned) {
        (*cinfo->err->format_message)(cinfo, ctx->warning);
        ctx->warned = true;
    }
}

void jpeg_progress_callback(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
    if (d->input_scan_number > kMaxJpegScans) {
        JpegContext* ctx = jpeg_context(cinfo);
        std::snprintf(ctx->message, sizeof(ctx->message),
                      "more than %d scans (a progressive file this long is refused)",
                      kMaxJpegScans);
        std::longjmp(ctx->jump, 1);
    }
}

enum JpegStep { kJpegOk = 0, kJpegLibraryError = 1, kJpegColorSpace = 2, kJpegExtent = 3 };

// Creates the decompressor, reads the header, chooses the output (grey, or BGR/RGB: the
// original's JCS_EXT_BGR) and the original's JDCT_ISLOW, and starts decompression.
int jpeg_start(j_decompress_ptr cinfo, JpegContext* ctx, const unsigned char* data, size_t size,
               ColorOrder order, uint32_t max_extent) {
    if (setjmp(ctx->jump)) return kJpegLibraryError;
    jpeg_CreateDecompress(cinfo, JPEG_LIB_VERSION, sizeof(jpeg_decompress_struct));
    cinfo->progress = &ctx->progress;
    jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
    jpeg_read_header(cinfo, TRUE);
    switch (cinfo->jpeg_color_space) {
        case JCS_GRAYSCALE: cinfo->out_color_space = JCS_GRAYSCALE; break;
        case JCS_YCbCr:
        case JCS_RGB:
            cinfo->out_color_space = order == ColorOrder::Bgr ? JCS_EXT_BGR : JCS_EXT_RGB;
            break;
        default: return kJpegColorSpace;
    }
    if (cinfo->image_width == 0 || cinfo->image_height == 0 || cinfo->image_width > max_extent ||
        cinfo->image_height > max_extent)
        return kJpegExtent;
    cinfo->dct_method = JDCT_ISLOW;
    jpeg_start_decompress(cinfo);
    return kJpegOk;
}

// Decodes every scanline into out (output_height rows of `stride` bytes) and finishes.
int jpeg_read_all(j_decompress_ptr cinfo, JpegContext* ctx, unsigned char* out, size_t stride) {
    if (setjmp(ctx->jump)) return kJpegLibraryError;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = out + size_t(cinfo->output_scanline) * stride;
        if (jpeg_read_scanlines(cinfo, &row, 1) != 1) {
            std::snprintf(ctx->message, sizeof(ctx->message), "decoding stopped at line %u",
                          cinfo->output_scanline);
            return kJpegLibraryError;
        }
    }
    jpeg_finish_decompress(cinfo);
    return kJpegOk;
}

const char* jpeg_color_space_name(J_COLOR_SPACE s) {
    switch (s) {
        case JCS_CMYK: return "CMYK";
        case JCS_YCCK: return "YCCK";
        case JCS_UNKNOWN: return "unknown";
        default: return "unsupported";
    }
}

Result<Image> decode_jpeg(ConstByteSpan file, const ImageDecodeOptions& options) {
    JpegContext ctx{};
    jpeg_decompress_struct cinfo{};
    cinfo.err = jpeg_std_error(&ctx.error);
    ctx.error.error_exit = jpeg_error_exit_callback;
    ctx.error.emit_message = jpeg_emit_message_callback;
    ctx.progress.progress_monitor = jpeg_progress_callback;
    struct Destroy {
        jpeg_decompress_struct* cinfo;
        ~Destroy() { jpeg_destroy_decompress(cinfo); }  // safe on a never-created struct too
    } destroy{&cinfo};

    const auto* data = reinterpret_cast<const unsigned char*>(file.data());
    switch (jpeg_start(&cinfo, &ctx, data, file.size(), options.order, options.max_extent)) {
        case kJpegOk: break;
        case kJpegColorSpace:
            return error("JPEG: colour space ", jpeg_color_space_name(cinfo.jpeg_color_space),
                         " is not supported (greyscale, YCbCr and RGB are)");
        case kJpegExtent:
            return check_extent("JPEG", cinfo.image_width, cinfo.image_height, options);
        default: return error("JPEG: ", ctx.message);
    }
    if (ctx.warned) return error("JPEG: corrupt data: ", ctx.warning);

    const uint32_t channels = static_cast<uint32_t>(cinfo.output_components);
    if (channels != 1 && channels != 3)
        return error("JPEG: the decoder produced ", channels, " components per pixel");
    const size_t stride = size_t(cinfo.output_width) * channels;
    std::vector<unsigned char> pixels(stride * cinfo.output_height);
    if (jpeg_read_all(&cinfo, &ctx, pixels.data(), stride) != kJpegOk)
        return error("JPEG: ", ctx.message);
    if (ctx.warned) return error("JPEG: corrupt data: ", ctx.warning);

    Image image;
    image.type = ImageFileType::Jpeg;
    image.width = cinfo.output_width;
    image.height = cinfo.output_height;
    image.channels = channels;
    image.max_value = 255;
    image.order = options.order;
    image.samples.assign(pixels.begin(), pixels.end());
    return image;
}

}  // namespace

std::string Image::describe() const {
    std::ostringstream out;
    out << width << " x " << height << ' ' << channel_names(*this) << ", " << bits_for(max_value)
        << "-bit "
        << (type == ImageFileType::Pnm ? (channels >= 3 ? "PPM" : "PGM")
                                       : std::string(to_string(type)));
    return out.str();
}

Result<Image> decode_image(ConstByteSpan file, const ImageDecodeOptions& options) {
    if (options.max_extent == 0) return error("image: the size limit (max_extent) is 0");
    if (file.empty()) return error("the file is empty");
    auto byte = [&](size_t i) { return i < file.size() ? std::to_integer<uint8_t>(file[i]) : 0; };
    static constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (byte(0) == 0x89 && byte(1) == 'P') {
        if (file.size() < 8 || std::memcmp(file.data(), kPngSignature, 8) != 0)
            return error("PNG: bad signature (the file is truncated or was transferred as text)");
        return decode_png(file, options);
    }
    if (byte(0) == 0xff && byte(1) == 0xd8) return decode_jpeg(file, options);
    if (byte(0) == 'P' && file.size() >= 2 && byte(1) >= '0' && byte(1) <= '9')
        return decode_pnm(file, options);
    std::ostringstream first;
    for (size_t i = 0; i < std::min<size_t>(file.size(), 4); ++i)
        first << (i ? " " : "") << "0x" << std::hex << unsigned(byte(i));
    return error("not a PGM/PPM, PNG or JPEG file (it starts with ", first.str(), ")");
}

Result<Image> read_image(const std::string& path, const ImageDecodeOptions& options) {
    // open, fstat, read, close (a classify loop reads an image per inference: streams and
    // separate stat calls took as long as the emulated network's first layers). O_NONBLOCK: a
    // FIFO is refused below instead of blocking the open.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return error("image ", path, ": cannot open: ", std::strerror(errno));
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return error("image ", path, ": cannot stat: ", std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return error("image ", path, ": not a regular file");
    // Far more than any image within the extent limit takes.
    constexpr off_t kMaxFileBytes = off_t(1) << 30;
    if (st.st_size > kMaxFileBytes)
        return error("image ", path, ": the file is ", st.st_size,
                     " bytes; images above 1 GiB are "
                     "refused");
    std::vector<std::byte> bytes(static_cast<size_t>(st.st_size));
    for (size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return error("image ", path, ": read failed");
        done += static_cast<size_t>(n);
    }
    Result<Image> image = decode_image(bytes, options);
    if (!image) return image.status().context("image " + path);
    return image;
}

// ---- Conversion -----------------------------------------------------------------------------

Result<InputFormat> input_format_from_pixel_format(uint32_t pixel_format) {
    switch (pixel_format) {
        case 0: return InputFormat::R8;
        case 8: return InputFormat::A16B16G16R16_F;
        case 12: return InputFormat::A8B8G8R8;
        case 36: return InputFormat::Feature;
        case 37: return InputFormat::FeatureX8;
        default: break;
    }
    std::string name = "number " + std::to_string(pixel_format);
    if (pixel_format < kPixelFormatCount)
        name = std::string(pixel_format_info(static_cast<PixelFormat>(pixel_format)).name);
    return error("input pixel format ", name, " cannot take an image: the supported formats ",
                 "are R8, A8B8G8R8, A16B16G16R16_F, FEATURE and FEATURE_X8");
}

uint16_t fp16_round_ties_away(float value) {
    const uint32_t x = std::bit_cast<uint32_t>(value);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
    if (a >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above: infinity
    if (a < 0x38800000u) {                        // below 2^-14: denormal or zero
        if (a < 0x33000000u) return sign;         // below 2^-25: zero
        const uint32_t exponent = a >> 23;
        const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - exponent;  // the value in units of 2^-24 is mantissa >> shift
        uint32_t q = mantissa >> shift;
        if (mantissa & (1u << (shift - 1))) ++q;  // half a unit or more: away from zero
        return static_cast<uint16_t>(sign | q);
    }
    return static_cast<uint16_t>(sign | ((a + 0x1000u - 0x38000000u) >> 13));
}

namespace {

// The stand-in configurations whose atoms define FEATURE (32 bytes) and FEATURE_X8 (8).
const HwConfig& feature_config(InputFormat f) {
    return **find_hw_config(f == InputFormat::FeatureX8 ? "nv_small" : "nv_full");
}

bool is_feature(InputFormat f) {
    return f == InputFormat::Feature || f == InputFormat::FeatureX8;
}

PixelFormat pixel_format_of(InputFormat f) {
    switch (f) {
        case InputFormat::A16B16G16R16_F: return PixelFormat::A16B16G16R16_F;
        case InputFormat::A8B8G8R8: return PixelFormat::A8B8G8R8;
        default: return PixelFormat::R8;
    }
}

Status check_layout(const InputTensorLayout& l) {
    const bool fp16 = l.precision == Precision::Fp16;
    const bool int8 = l.precision == Precision::Int8;
    bool ok = false;
    switch (l.format) {
        case InputFormat::R8:
        case InputFormat::A8B8G8R8:
        case InputFormat::FeatureX8: ok = int8; break;
        case InputFormat::A16B16G16R16_F: ok = fp16; break;
        case InputFormat::Feature: ok = int8 || fp16; break;
    }
    if (!ok)
        return error("the ", to_string(l.format), " format cannot hold ", to_string(l.precision),
                     " data (R8, A8B8G8R8 and FEATURE_X8 take int8, A16B16G16R16_F fp16, ",
                     "FEATURE either)");
    if (l.dims.n != 1)
        return error("the input tensor has ", l.dims.n, " batches; an image fills exactly one");
    if (l.dims.c == 0 || l.dims.h == 0 || l.dims.w == 0)
        return error("the input tensor is ", l.dims.w, " x ", l.dims.h, " x ", l.dims.c,
                     " (an extent is 0)");
    if (!is_feature(l.format)) {
        const uint32_t components = l.format == InputFormat::R8 ? 1 : 4;
        if (l.dims.c > components)
            return error("the ", to_string(l.format), " format holds ", components,
                         components == 1 ? " channel" : " channels", " per pixel; the tensor has ",
                         l.dims.c);
    }
    return {};
}

Result<FeatureCube> feature_cube(const InputTensorLayout& l) {
    return make_feature_cube(feature_config(l.format), l.precision, l.dims,
                             {l.line_stride, l.surface_stride, 0});
}

Result<PixelSurface> pixel_surface(const HwConfig& cfg, const InputTensorLayout& l) {
    Result<PixelSurface> s =
        dense_pixel_surface(cfg, pixel_format_of(l.format), l.dims.w, l.dims.h);
    if (!s) return s;
    PixelSurface surface = *s;
    if (l.line_stride != 0) surface.planes[0].line_stride = l.line_stride;
    if (Status st = check_pixel_surface(cfg, surface); !st) return st;
    return surface;
}

}  // namespace

Result<uint64_t> input_tensor_bytes(const HwConfig& cfg, const InputTensorLayout& layout) {
    if (Status s = check_layout(layout); !s) return s;
    uint64_t need = 0;
    if (is_feature(layout.format)) {
        Result<FeatureCube> cube = feature_cube(layout);
        if (!cube) return cube.status();
        need = cube->size_bytes();
    } else {
        Result<PixelSurface> surface = pixel_surface(cfg, layout);
        if (!surface) return surface.status();
        Result<uint64_t> bytes = pixel_surface_bytes(cfg, *surface);
        if (!bytes) return bytes.status();
        need = *bytes;
    }
    if (layout.size != 0 && layout.size < need)
        return error("the input tensor's buffer of ", layout.size, " bytes is smaller than the ",
                     need, " bytes its layout covers");
    return std::max(need, layout.size);
}

namespace {

// The original's sample -> int8: floor(x * 127.0 / max_value + 0.5) in double (a sample above
// max_value, possible only in a hand-made Image, saturates).
uint8_t sample_to_int8(uint32_t v, uint32_t max_value) {
    const double q = std::floor(v * 127.0 / static_cast<double>(max_value) + 0.5);
    return static_cast<uint8_t>(std::min(q, 127.0));
}

// sample_to_int8 of every value 0..max_value.
std::vector<uint8_t> int8_table(uint32_t max_value) {
    std::vector<uint8_t> t(size_t(max_value) + 1);
    for (uint32_t v = 0; v <= max_value; ++v) t[v] = sample_to_int8(v, max_value);
    return t;
}

}  // namespace

Status convert_image(const Image& image, const HwConfig& cfg, const InputTensorLayout& layout,
                     const ImageConversion& conversion, ByteSpan dst) {
    // What a message names (made only for one: the runtime converts an image per run).
    const auto what = [&] {
        return "image " + image.describe() + " into " + std::string(to_string(layout.format)) +
               " " + std::string(to_string(layout.precision)) + " input";
    };
    Result<uint64_t> bytes = input_tensor_bytes(cfg, layout);
    if (!bytes) return bytes.status().context(what());
    if (dst.size() < *bytes)
        return error(what(), ": the destination of ", dst.size(), " bytes is smaller than the ",
                     *bytes, " bytes of the tensor");
    if (image.width == 0 || image.height == 0 || image.channels == 0 || image.channels > 4 ||
        image.max_value == 0 || image.max_value > 65535 ||
        image.samples.size() != size_t(image.width) * image.height * image.channels)
        return error(what(), ": the image is empty or inconsistent");
    if (image.width != layout.dims.w || image.height != layout.dims.h)
        return error(what(), ": the image is ", image.width, " x ", image.height,
                     " pixels and the input tensor ", layout.dims.w, " x ", layout.dims.h,
                     " (images are not resized: resize it first)");
    if (image.channels > layout.dims.c)
        return error(what(), ": the image has ", image.channels, " channels (",
                     channel_names(image), ") and the input tensor ", layout.dims.c);
    const bool fp16 = layout.precision == Precision::Fp16;
    if (fp16) {
        if (!std::isfinite(conversion.normalize) || !(conversion.normalize > 0))
            return error(what(), ": normalize must be a positive number, not ",
                         conversion.normalize);
        for (float m : conversion.mean)
            if (!std::isfinite(m)) return error(what(), ": mean ", m, " is not a finite number");
    }

    // The host tensor, channel-major (NCHW); channels the image lacks stay zero.
    const uint32_t channels = is_feature(layout.format)
                                  ? layout.dims.c
                                  : pixel_format_info(pixel_format_of(layout.format)).channels;
    const size_t plane = size_t(image.width) * image.height;
    std::vector<uint16_t> halves(fp16 ? plane * channels : 0);
    std::vector<uint8_t> bytes8(fp16 ? 0 : plane * channels);
    // A table when the image has more samples than there are values; 8-bit images (the common
    // case) share one, made once.
    static const std::vector<uint8_t> kInt8Of255 = int8_table(255);
    std::vector<uint8_t> own_table;
    const std::vector<uint8_t>* int8_of = &own_table;
    if (!fp16 && image.max_value == 255)
        int8_of = &kInt8Of255;
    else if (!fp16 && image.samples.size() > image.max_value)
        own_table = int8_table(image.max_value);
    for (uint32_t c = 0; c < image.channels; ++c) {
        const float mean = conversion.mean[c];
        for (uint32_t y = 0; y < image.height; ++y) {
            for (uint32_t x = 0; x < image.width; ++x) {
                const uint32_t v = image.at(x, y, c);
                const size_t i = c * plane + size_t(y) * image.width + x;
                if (fp16) {
                    // float arithmetic, as the original: (float(x) - mean) / normalize.
                    const float f = (static_cast<float>(v) - mean) / conversion.normalize;
                    halves[i] = fp16_round_ties_away(f);
                } else {
                    bytes8[i] =
                        v < int8_of->size() ? (*int8_of)[v] : sample_to_int8(v, image.max_value);
                }
            }
        }
    }

    ConstTensorView src;
    if (fp16) {
        src.data = halves.data();
        src.bytes = halves.size() * sizeof(uint16_t);
        src.type = HostType::Float16;
    } else {
        src.data = bytes8.data();
        src.bytes = bytes8.size();
        // Values are 0..127: the same bytes as int8 or uint8.
        src.type = is_feature(layout.format) ? HostType::Int8 : HostType::Uint8;
    }
    src.layout = HostLayout::NCHW;
    src.dims = {1, channels, image.height, image.width};

    const ByteSpan out = dst.first(static_cast<size_t>(*bytes));
    std::fill(out.begin(), out.end(), std::byte{0});
    Status s;
    if (is_feature(layout.format)) {
        Result<FeatureCube> cube = feature_cube(layout);
        s = cube ? pack_feature(src, *cube, out) : cube.status();
    } else {
        Result<PixelSurface> surface = pixel_surface(cfg, layout);
        s = surface ? pack_pixels(cfg, src, *surface, out) : surface.status();
    }
    if (!s) {
        std::fill(out.begin(), out.end(), std::byte{0});
        return s.context(what());
    }
    return {};
}

}  // namespace nvdla::runtime
