// nvdla_vp: the host side of the NVDLA virtual platform (docs/virtual-platform.md).
//
// Each --instance is one emulated NVDLA (umd/emu) behind one QEMU ivshmem-doorbell device: the
// program serves the ivshmem-doorbell protocol on a UNIX socket per instance, hands QEMU the
// shared memory (header, register mailbox, carve-out), executes the guest driver's register
// accesses on the model and raises the model's interrupt as MSI-X.
//
//   nvdla_vp [options] -- qemu-system-x86_64 ARGS...   starts QEMU with the devices added and
//                                                       serves it until it exits
//   nvdla_vp [options]                                  prints the QEMU options to add, serves
//                                                       until SIGINT or SIGTERM
//
// At the end it reports, per instance, what the model did and what it refused: DMA outside the
// carve-out, refused ring entries, protocol errors. Exit status: QEMU's when it failed, else 2
// when the model saw any of those, else 0.
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ivshmem.hpp"
#include "vp_instance.hpp"

namespace {

using nvdla::Result;
using nvdla::vp::Instance;
using nvdla::vp::InstanceOptions;
using nvdla::vp::InstanceStats;

// "nv_full", "nv_small:32M", "nv_full:134217728" -> configuration and shared-memory bytes.
Result<InstanceOptions> parse_instance(const std::string& spec, const InstanceOptions& defaults) {
    InstanceOptions o = defaults;
    const size_t colon = spec.find(':');
    o.config = spec.substr(0, colon);
    if (colon == std::string::npos) return o;
    const std::string size = spec.substr(colon + 1);
    char* end = nullptr;
    unsigned long long v = std::strtoull(size.c_str(), &end, 10);
    if (end == size.c_str()) return nvdla::error("--instance ", spec, ": '", size, "' is no size");
    const std::string unit = end;
    if (unit == "M" || unit == "MiB")
        v <<= 20;
    else if (unit == "G" || unit == "GiB")
        v <<= 30;
    else if (!unit.empty())
        return nvdla::error("--instance ", spec, ": unknown unit '", unit, "' (M or G)");
    o.shm_bytes = v;
    return o;
}

bool violations(const InstanceStats& s) {
    return s.outside_carveout || s.bad_entries || s.protocol_errors || s.model_exceptions;
}

void report(const Instance& inst) {
    const InstanceStats& s = inst.stats();
    std::fprintf(
        stderr,
        "nvdla_vp: %s: %llu register writes and %llu reads in %llu batches (%llu "
        "doorbells), %llu interrupts, %llu operations, %llu resets, %llu stalls; %llu "
        "DMA faults, %llu accesses outside the carve-out, %llu refused ring entries, %llu "
        "protocol errors\n",
        inst.name().c_str(), static_cast<unsigned long long>(s.writes),
        static_cast<unsigned long long>(s.reads), static_cast<unsigned long long>(s.batches),
        static_cast<unsigned long long>(s.doorbells), static_cast<unsigned long long>(s.interrupts),
        static_cast<unsigned long long>(s.operations), static_cast<unsigned long long>(s.resets),
        static_cast<unsigned long long>(s.stalls), static_cast<unsigned long long>(s.dma_faults),
        static_cast<unsigned long long>(s.outside_carveout),
        static_cast<unsigned long long>(s.bad_entries),
        static_cast<unsigned long long>(s.protocol_errors));
    if (!s.first_outside.empty())
        std::fprintf(stderr, "nvdla_vp: %s: first access outside the carve-out: %s\n",
                     inst.name().c_str(), s.first_outside.c_str());
    if (!s.first_bad_entry.empty())
        std::fprintf(stderr, "nvdla_vp: %s: first refused entry: %s\n", inst.name().c_str(),
                     s.first_bad_entry.c_str());
    if (s.model_exceptions)
        std::fprintf(stderr, "nvdla_vp: %s: the model threw %llu times\n", inst.name().c_str(),
                     static_cast<unsigned long long>(s.model_exceptions));
    std::fprintf(stderr,
                 "nvdla_vp: %s: %llu computations on the compute thread, %llu ring entries "
                 "answered while one ran\n",
                 inst.name().c_str(), static_cast<unsigned long long>(s.computations),
                 static_cast<unsigned long long>(s.answered_while_computing));
}

nlohmann::json stats_json(const Instance& inst) {
    const InstanceStats& s = inst.stats();
    return {{"instance", inst.name()},
            {"shared_memory_bytes", inst.options().shm_bytes},
            {"carveout_bytes", inst.carveout_bytes()},
            {"connections", s.connections},
            {"register_writes", s.writes},
            {"register_reads", s.reads},
            {"batches", s.batches},
            {"doorbells", s.doorbells},
            {"interrupts", s.interrupts},
            {"operations", s.operations},
            {"resets", s.resets},
            {"stalls", s.stalls},
            {"dma_faults", s.dma_faults},
            {"outside_carveout", s.outside_carveout},
            {"bad_entries", s.bad_entries},
            {"protocol_errors", s.protocol_errors},
            {"programming_errors", s.programming_errors},
            {"model_exceptions", s.model_exceptions},
            {"computations", s.computations},
            {"answered_while_computing", s.answered_while_computing},
            {"first_outside", s.first_outside},
            {"first_bad_entry", s.first_bad_entry}};
}

// Starts QEMU (argv[0] is the program); its pid, or -1.
pid_t start_qemu(const std::vector<std::string>& args, const sigset_t& old_mask) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        // QEMU goes when nvdla_vp goes: its devices would be dead anyway.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
        ::execvp(argv[0], argv.data());
        std::perror(("nvdla_vp: cannot run " + args[0]).c_str());
        ::_exit(127);
    }
    if (pid < 0) std::perror("nvdla_vp: fork");
    return pid;
}

}  // namespace

int main(int argc, char** argv) {
    // Everything after "--" is QEMU's command line.
    std::vector<std::string> qemu;
    int own = argc;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--") {
            own = i;
            for (int j = i + 1; j < argc; ++j) qemu.emplace_back(argv[j]);
            break;
        }

    CLI::App app{
        "nvdla_vp: the host side of the NVDLA virtual platform: emulated NVDLAs behind "
        "QEMU ivshmem-doorbell devices. Usage: nvdla_vp [options] [-- QEMU COMMAND "
        "LINE]",
        "nvdla_vp"};
    std::vector<std::string> specs;
    std::string socket_dir, stats_file;
    InstanceOptions defaults;
    bool print_args = false;
    app.add_option("--instance", specs,
                   "an NVDLA: CONFIG[:SIZE], SIZE of its shared memory (power of two, default "
                   "64M; the carve-out is all but its first MiB); repeatable, default nv_full");
    app.add_option("--socket-dir", socket_dir, "where the sockets go (default: a new temp dir)");
    app.add_option("--ring-entries", defaults.ring_entries, "register ring entries per instance")
        ->capture_default_str();
    app.add_flag("--test-hooks", defaults.test_hooks,
                 "let the guest stall the model until its next reset (fault-path tests)");
    app.add_option("--stats", stats_file, "write every instance's counters as JSON here at exit");
    app.add_flag("--print-qemu-args", print_args, "print the QEMU options for the devices");
    app.add_flag("-v,--verbose", defaults.verbose, "log connections and resets (-vv: batches)");
    try {
        app.parse(own, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 1;
    }
    if (specs.empty()) specs.push_back("nv_full");

    // Signals are taken with sigwait(), blocked before any thread starts (instances start
    // their compute threads): a thread with SIGTERM unblocked would take it and die.
    sigset_t mask, old_mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGHUP);
    ::pthread_sigmask(SIG_BLOCK, &mask, &old_mask);

    bool own_dir = false;
    if (socket_dir.empty()) {
        std::string tmpl = (std::filesystem::temp_directory_path() / "nvdla-vp-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) {
            std::perror("nvdla_vp: mkdtemp");
            return 1;
        }
        socket_dir = tmpl;
        own_dir = true;
    } else {
        std::error_code ec;
        std::filesystem::create_directories(socket_dir, ec);
    }

    std::vector<std::unique_ptr<Instance>> instances;
    for (size_t i = 0; i < specs.size(); ++i) {
        Result<InstanceOptions> o = parse_instance(specs[i], defaults);
        if (!o) {
            std::cerr << "nvdla_vp: " << o.message() << "\n";
            return 1;
        }
        InstanceOptions opts = *o;
        opts.socket_path = socket_dir + "/nvdla-" + std::to_string(i) + ".sock";
        Result<std::unique_ptr<Instance>> inst = Instance::create(opts);
        if (!inst) {
            std::cerr << "nvdla_vp: instance " << specs[i] << ": " << inst.message() << "\n";
            return 1;
        }
        instances.push_back(std::move(inst).value());
    }

    std::vector<std::string> device_args;
    for (size_t i = 0; i < instances.size(); ++i) {
        const std::string id = "nvdla" + std::to_string(i);
        for (const std::string& a : {std::string("-chardev"), instances[i]->qemu_chardev(id),
                                     std::string("-device"), instances[i]->qemu_device(id)})
            device_args.push_back(a);
    }
    if (print_args || qemu.empty()) {
        std::string line;
        for (const std::string& a : device_args) line += (line.empty() ? "" : " ") + a;
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    }

    Result<nvdla::vp::UniqueFd> stop = nvdla::vp::make_eventfd();
    if (!stop) {
        std::cerr << "nvdla_vp: " << stop.message() << "\n";
        return 1;
    }
    std::vector<std::thread> threads;
    for (auto& inst : instances)
        threads.emplace_back([&inst, fd = stop->get()] { inst->serve(fd); });

    int exit_code = 0;
    if (!qemu.empty()) {
        std::vector<std::string> args = qemu;
        args.insert(args.end(), device_args.begin(), device_args.end());
        pid_t child = start_qemu(args, old_mask);
        if (child < 0) exit_code = 1;
        // Until QEMU exits; SIGINT, SIGTERM and SIGHUP are passed on to it as SIGTERM.
        while (child > 0) {
            int sig = 0;
            if (sigwait(&mask, &sig) != 0) break;
            if (sig != SIGCHLD) {
                ::kill(child, SIGTERM);
                continue;
            }
            int status = 0;
            if (::waitpid(child, &status, WNOHANG) != child) continue;
            child = -1;
            if (WIFEXITED(status))
                exit_code = WEXITSTATUS(status);
            else
                exit_code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
    } else {
        for (int sig = SIGCHLD; sig == SIGCHLD;)
            if (sigwait(&mask, &sig) != 0) break;
    }

    nvdla::vp::signal_eventfd(stop->get());
    for (std::thread& t : threads) t.join();

    bool bad = false;
    nlohmann::json all = nlohmann::json::array();
    for (const auto& inst : instances) {
        report(*inst);
        bad = bad || violations(inst->stats());
        all.push_back(stats_json(*inst));
    }
    if (!stats_file.empty()) {
        std::ofstream out(stats_file);
        out << nlohmann::json{{"instances", all}}.dump(2) << "\n";
        if (!out) std::cerr << "nvdla_vp: cannot write " << stats_file << "\n";
    }
    std::fprintf(stderr, "NVDLA-VP-HOST: %s\n",
                 bad ? "FAIL (accesses outside the carve-out, refused entries or protocol errors)"
                     : "clean (no access outside the carve-out, no refused ring entry, no "
                       "protocol error)");
    if (own_dir) {
        std::error_code ec;
        instances.clear();  // removes the sockets
        std::filesystem::remove(socket_dir, ec);
    }
    if (exit_code) return exit_code;
    return bad ? 2 : 0;
}
