// The CPU a benchmark ran on, as /proc/cpuinfo names it: every benchmark prints it, since our
// machines differ (AVX-512/VNNI or AVX2 only).
#pragma once

#include <cstdio>
#include <cstring>
#include <string>

inline std::string cpu_name() {
    FILE* f = std::fopen("/proc/cpuinfo", "r");
    if (!f) return "unknown";
    char line[256];
    std::string name = "unknown";
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "model name", 10) == 0) {
            if (const char* colon = std::strchr(line, ':')) name = colon + 2;
            if (!name.empty() && name.back() == '\n') name.pop_back();
            break;
        }
    std::fclose(f);
    return name;
}
