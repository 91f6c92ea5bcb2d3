// CMAC_A/B through oneDNN: the int8 products of a direct convolution of feature data computed
// by oneDNN's convolution (s8 data x s8 weights -> s32 sums), which on CPUs with AMX is several
// times faster than the model's own VNNI kernel.
//
// Exactness. oneDNN accumulates int8 products in int32 but hands the sums through fp32 on
// their way out (its int8 kernels convert to fp32 for scales and post-ops, then back), and on
// CPUs without AMX it runs s8 x s8 as (s8 + 128) x s8 with a compensation of 128 x sum(w). The
// layer goes to oneDNN only when every value that can arise that way is an integer of at most
// 2^24 in magnitude, which int32 holds and fp32 represents exactly:
//   |sum of (d + 128) x w| <= 256 x sum |w| <= 2^24,  |d| <= 128 (data and pad are int8),
// sum over one kernel's taps and channels, the largest kernel; and only where oneDNN runs its
// AVX-512 VNNI or AMX kernels (without VNNI it halves s8 weights or saturates pairs of products
// in int16). The result
// is then CMAC's exact sum, which CACC delivers as SDP reads it (AccumulatorCube, channels-last
// form). Otherwise the model's own kernels compute the layer (cmac.cpp).
//
// Before the first layer, one convolution with extreme operands (-128 data and weights, sums up
// to the 2^24 bound) is computed by oneDNN and checked against exact integer arithmetic: if
// this CPU's oneDNN kernel is not exact after all, oneDNN is not used. Nor at an emulator level
// below AVX-512 (a CPU without it, or NVDLA_EMU_ISA lowering it: the model's own kernels for
// that level run and are tested).
//
// oneDNN runs on the calling thread only (see OneThread).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"

#if defined(NVDLA_HAVE_DNNL)
#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace nvdla::emu::conv {

namespace {
std::atomic<uint64_t> g_layers{0};
}  // namespace

uint64_t onednn_layers() {
    return g_layers;
}

#if defined(NVDLA_HAVE_DNNL)

namespace {

// Below this many multiply-adds the model's VNNI kernel takes a few tens of microseconds and a
// new oneDNN primitive (JIT-compiled, about a millisecond) does not pay off (Auto only).
constexpr uint64_t kOnednnMinMacs = uint64_t(1) << 24;
// The largest |value| every sum, biased or not, may reach: fp32 holds integers exactly to 2^24.
constexpr int64_t kExactLimit = int64_t(1) << 24;
// Primitives kept, one per layer shape (least recently used dropped first).
constexpr size_t kCacheEntries = 64;

// The largest sum over one kernel of |w|.
int64_t largest_kernel_l1(const ConvWeights& w) {
    const uint64_t per_kernel = uint64_t(w.height) * w.width * w.channels;
    int64_t largest = 0;
    for (uint32_t k = 0; k < w.kernels; ++k) {
        const int16_t* v = w.kernel(k);
        int64_t sum = 0;
        for (uint64_t i = 0; i < per_kernel; ++i) sum += v[i] < 0 ? -int64_t(v[i]) : v[i];
        largest = std::max(largest, sum);
    }
    return largest;
}

// oneDNN's OpenMP runtime would use every core; the model keeps it to the calling thread. With
// more, OpenMP's threads spin-wait after each call (OMP_WAIT_POLICY's default) while the
// model's own threads run the next stage: measured 5-20 times slower on a busy machine. The
// OpenMP functions come from the runtime libdnnl loads (no OpenMP build dependency here).
class OneThread {
  public:
    OneThread() {
        static const auto get =
            reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
        static const auto set =
            reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
        if (get && set) {
            set_ = set;
            previous_ = get();
            if (previous_ != 1) set(1);
        }
    }
    ~OneThread() {
        if (set_ && previous_ != 1) set_(previous_);
    }
    OneThread(const OneThread&) = delete;
    OneThread& operator=(const OneThread&) = delete;

  private:
    void (*set_)(int) = nullptr;
    int previous_ = 1;
};

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Everything the primitive depends on.
struct Shape {
    int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, oh = 0, ow = 0;
    int64_t sy = 1, sx = 1, dy = 0, dx = 0, pt = 0, pl = 0, pb = 0, pr = 0;
    bool operator==(const Shape&) const = default;
};

}  // namespace

bool onednn_available() {
    static const bool available = [] {
        try {
            // AVX-512 with VNNI or AMX only: the kernels the model's avx512 level stands beside
            // (oneDNN's AVX2 int8 kernels, VNNI or not, are not used; docs/emu/performance.md).
            switch (dnnl::get_effective_cpu_isa()) {
                case dnnl::cpu_isa::avx512_core_vnni:
                case dnnl::cpu_isa::avx512_core_bf16:
                case dnnl::cpu_isa::avx512_core_amx: return true;
                default: return false;
            }
        } catch (const std::exception&) {
            return false;
        }
    }();
    return available;
}

struct OnednnConvolution::Impl {
    struct Entry {
        Shape shape;
        bool supported = false;
        dnnl::convolution_forward::primitive_desc pd;
        dnnl::convolution_forward conv;
        uint64_t last_use = 0;
    };
    // A layer's weights in the primitive's layout, kept with its decoded weights
    // (ConvWeights::reordered) so that the layer run again reorders nothing.
    struct Reordered {
        Shape shape;
        dnnl::memory weights;
    };

    bool started = false, usable = false;
    dnnl::engine engine;
    dnnl::stream stream;
    std::vector<Entry> entries;
    uint64_t clock = 0;
    std::vector<int8_t> plain;  // weights as s8 [k][r][s][c] for the reorder

    bool start() {
        if (!started) {
            started = true;
            try {
                engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
                stream = dnnl::stream(engine);
                usable = exact_on_this_cpu();
            } catch (const std::exception&) {
                usable = false;
            }
        }
        return usable;
    }

    // One 3x3 convolution, 32 channels, 16 kernels over 5x5 data, zero padding 1, computed by
    // oneDNN and exactly: data of -128 and 127 (pairs of products that saturate int16, as
    // oneDNN's AVX2 kernels do) with a few random cells, kernels of -128, of 127 (odd: halved
    // weights show) and random.
    bool exact_on_this_cpu() {
        constexpr int64_t kN = 1, kC = 32, kH = 5, kW = 5, kK = 16, kR = 3, kS = 3;
        std::vector<int8_t> src(size_t(kN * kH * kW * kC)), wei(size_t(kK * kR * kS * kC));
        uint32_t state = 12345;
        const auto next = [&state] {
            state = state * 1103515245u + 12345u;
            return static_cast<int8_t>(state >> 24);
        };
        for (size_t i = 0; i < src.size(); ++i)
            src[i] = i % 7 == 3 ? next() : (i % 2 ? int8_t(127) : int8_t(-128));
        for (int64_t k = 0; k < kK; ++k)
            for (int64_t i = 0; i < kR * kS * kC; ++i)
                wei[size_t(k * kR * kS * kC + i)] =
                    k == 0 ? int8_t(-128) : (k == 1 ? int8_t(127) : (k == 2 ? int8_t(-1) : next()));
        Shape sh;
        sh.n = kN, sh.c = kC, sh.h = kH, sh.w = kW, sh.k = kK, sh.r = kR, sh.s = kS;
        sh.oh = kH, sh.ow = kW, sh.pt = sh.pl = sh.pb = sh.pr = 1;
        Entry* e = entry(sh);
        if (!e) return true;  // no primitive for it: nothing to distrust (the layers ask again)
        ConvWeights w;
        w.kernels = kK, w.height = kR, w.width = kS, w.channels = kC;
        w.values.assign(wei.begin(), wei.end());
        const dnnl::memory& weights = reordered(*e, w);
        std::vector<int32_t> dst(size_t(kN * kH * kW * kK));
        dnnl::memory src_memory(e->pd.src_desc(), engine, src.data());
        dnnl::memory dst_memory(e->pd.dst_desc(), engine, dst.data());
        e->conv.execute(
            stream,
            {{DNNL_ARG_SRC, src_memory}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst_memory}});
        stream.wait();
        for (int64_t y = 0; y < kH; ++y)
            for (int64_t x = 0; x < kW; ++x)
                for (int64_t k = 0; k < kK; ++k) {
                    int64_t sum = 0;
                    for (int64_t r = 0; r < kR; ++r)
                        for (int64_t s = 0; s < kS; ++s) {
                            const int64_t iy = y + r - 1, ix = x + s - 1;
                            if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
                            for (int64_t c = 0; c < kC; ++c)
                                sum += int64_t(src[size_t((iy * kW + ix) * kC + c)]) *
                                       wei[size_t(((k * kR + r) * kS + s) * kC + c)];
                        }
                    if (dst[size_t((y * kW + x) * kK + k)] != sum) return false;
                }
        return true;
    }

    // The primitive for the shape, created the first time (nullptr when oneDNN has nothing
    // better than its reference implementation for it).
    Entry* entry(const Shape& sh) {
        ++clock;
        for (Entry& e : entries)
            if (e.shape == sh) {
                e.last_use = clock;
                return e.supported ? &e : nullptr;
            }
        if (entries.size() >= kCacheEntries)
            entries.erase(std::min_element(
                entries.begin(), entries.end(),
                [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; }));
        Entry& e = entries.emplace_back();
        e.shape = sh;
        e.last_use = clock;
        try {
            const dnnl::memory::desc src_md({sh.n, sh.c, sh.h, sh.w}, dt::s8, tag::nhwc);
            const dnnl::memory::desc weights_md({sh.k, sh.c, sh.r, sh.s}, dt::s8, tag::any);
            const dnnl::memory::desc dst_md({sh.n, sh.k, sh.oh, sh.ow}, dt::s32, tag::nhwc);
            const dnnl::convolution_forward::desc desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                weights_md, dst_md, {sh.sy, sh.sx}, {sh.dy, sh.dx}, {sh.pt, sh.pl}, {sh.pb, sh.pr});
            e.pd = dnnl::convolution_forward::primitive_desc(desc, engine);
            const std::string impl = e.pd.impl_info_str();
            if (impl.find("ref") != std::string::npos) return nullptr;
            e.conv = dnnl::convolution_forward(e.pd);
            e.supported = true;
        } catch (const std::exception&) {
            e.supported = false;
        }
        return e.supported ? &e : nullptr;
    }

    const dnnl::memory& reordered(const Entry& e, const ConvWeights& w) {
        if (const auto* r = std::any_cast<Reordered>(&w.reordered); r && r->shape == e.shape)
            return r->weights;
        const Shape& sh = e.shape;
        plain.resize(w.values.size());
        std::transform(w.values.begin(), w.values.end(), plain.begin(),
                       [](int16_t v) { return static_cast<int8_t>(v); });
        dnnl::memory user({{sh.k, sh.c, sh.r, sh.s}, dt::s8, tag::ohwi}, engine, plain.data());
        dnnl::memory weights(e.pd.weights_desc(), engine);
        dnnl::reorder(user, weights).execute(stream, user, weights);
        stream.wait();
        w.reordered = Reordered{sh, weights};
        w.reordered_bytes = e.pd.weights_desc().get_size();
        return std::any_cast<const Reordered&>(w.reordered).weights;
    }
};

OnednnConvolution::OnednnConvolution() : impl_(std::make_unique<Impl>()) {}
OnednnConvolution::~OnednnConvolution() = default;
OnednnConvolution::OnednnConvolution(OnednnConvolution&&) noexcept = default;
OnednnConvolution& OnednnConvolution::operator=(OnednnConvolution&&) noexcept = default;

bool OnednnConvolution::run(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                            ConvScratch& scratch, AccumulatorCube& out) {
    const MacKernel policy = forced_mac_kernel();
    if (policy != MacKernel::Auto && policy != MacKernel::OneDnn) return false;
    if (l.kind != InputKind::Feature || l.precision != Precision::Int8 || !d.narrow() ||
        w.precision != Precision::Int8 || w.values.empty() || w.kernels != l.kernels ||
        w.height != l.kernel_height || w.width != l.kernel_width ||
        w.channels != l.kernel_channels || d.channels != l.kernel_channels ||
        d.batches != l.batches)
        return false;
    const uint64_t macs = uint64_t(l.batches) * l.out_height * l.out_width * l.kernels *
                          l.kernel_height * l.kernel_width * l.kernel_channels;
    if (policy == MacKernel::Auto && macs < kOnednnMinMacs) return false;
    // Block-diagonal weights (grouped, depthwise): the model's grouped kernel multiplies only
    // the nonzero band, oneDNN every zero.
    if (policy == MacKernel::Auto &&
        banded_weights(w.values.data(), w.kernels, uint64_t(w.height) * w.width, w.channels))
        return false;
    if (!onednn_available() || isa_level() != IsaLevel::Avx512) return false;

    Impl& m = *impl_;
    if (w.largest_l1 < 0) w.largest_l1 = largest_kernel_l1(w);
    if (256 * w.largest_l1 > kExactLimit) return false;
    {
        const OneThread one_thread;
        if (!m.start()) return false;
    }

    // The input rows and columns the outputs reach, as oneDNN's padding; a plane of our own
    // when the pad is not 0 or the outputs leave input rows or columns unread.
    const int64_t span_y =
        int64_t(l.out_height - 1) * l.stride_y + int64_t(l.kernel_height - 1) * l.dilation_y + 1;
    const int64_t span_x =
        int64_t(l.out_width - 1) * l.stride_x + int64_t(l.kernel_width - 1) * l.dilation_x + 1;
    Shape sh;
    sh.n = l.batches;
    sh.c = l.kernel_channels;
    sh.k = l.kernels;
    sh.r = l.kernel_height;
    sh.s = l.kernel_width;
    sh.oh = l.out_height;
    sh.ow = l.out_width;
    sh.sy = l.stride_y;
    sh.sx = l.stride_x;
    sh.dy = l.dilation_y - 1;
    sh.dx = l.dilation_x - 1;
    const auto direct_shape = [&] {
        Shape s = sh;
        s.h = d.height;
        s.w = d.width;
        s.pt = l.pad_top;
        s.pl = l.pad_left;
        s.pb = span_y - l.pad_top - d.height;
        s.pr = span_x - l.pad_left - d.width;
        return s;
    };
    const auto plane_shape = [&] {
        Shape s = sh;
        s.h = span_y;
        s.w = span_x;
        return s;
    };
    const bool zero_pad = (l.pad_value & 0xffu) == 0;

    try {
        const OneThread one_thread;
        Impl::Entry* e = nullptr;
        bool direct = false;
        // (Data left in CDMA's atoms, ConvData::in_atoms, goes through the plane.)
        if (const Shape s = direct_shape(); zero_pad && !d.in_atoms && s.pb >= 0 && s.pr >= 0) {
            e = m.entry(s);
            direct = e != nullptr;
        }
        if (!e) e = m.entry(plane_shape());
        if (!e) return false;
        const dnnl::memory& weights = m.reordered(*e, w);

        const int8_t* src = d.bytes.data();
        if (!direct) {
            uint32_t rows = 0, cols = 0;
            build_feature_plane8(l, d, scratch.plane8, rows, cols);
            src = scratch.plane8.data();
        }
        const size_t count = size_t(l.batches) * l.out_height * l.out_width * l.kernels;
        int32_t* sums = channels_last_storage(scratch, count);
        dnnl::memory src_memory(e->pd.src_desc(), m.engine, const_cast<int8_t*>(src));
        dnnl::memory dst_memory(e->pd.dst_desc(), m.engine, sums);
        e->conv.execute(
            m.stream,
            {{DNNL_ARG_SRC, src_memory}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst_memory}});
        m.stream.wait();
    } catch (const std::exception&) {
        return false;
    }

    ++g_layers;
    out.values.clear();
    out.sums = scratch.cube;
    out.channel_stride = l.kernels;
    out.clip = l.clip_truncate;
    return true;
}

#else  // no oneDNN in this build

bool onednn_available() {
    return false;
}

struct OnednnConvolution::Impl {};

OnednnConvolution::OnednnConvolution() : impl_(std::make_unique<Impl>()) {}
OnednnConvolution::~OnednnConvolution() = default;
OnednnConvolution::OnednnConvolution(OnednnConvolution&&) noexcept = default;
OnednnConvolution& OnednnConvolution::operator=(OnednnConvolution&&) noexcept = default;

bool OnednnConvolution::run(const ConvLayer&, const ConvData&, const ConvWeights&, ConvScratch&,
                            AccumulatorCube&) {
    return false;
}

#endif

}  // namespace nvdla::emu::conv
