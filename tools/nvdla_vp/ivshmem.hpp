// The host end of QEMU's ivshmem-doorbell device: the server side of its client-server protocol
// (docs/specs/ivshmem-spec in QEMU) and the descriptors it passes around.
//
// Every message is one 8-byte little-endian signed number, sent with one sendmsg() each, with at
// most one file descriptor attached (SCM_RIGHTS). On connect the server sends, in order: the
// protocol version (0); the client's peer id; -1 with the shared-memory fd; for every other peer,
// its id once per interrupt vector, each with the eventfd that interrupts it; the client's own id
// once per vector, each with the eventfd that interrupts the client (QEMU turns a write to it
// into that MSI-X vector).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "nvdla/status.hpp"

namespace nvdla::vp {

// A file descriptor closed with its owner.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    void reset(int fd = -1);

  private:
    int fd_ = -1;
};

// "what: strerror(errno)" with errno's name.
Status errno_failure(const std::string& what);

// A listening UNIX stream socket at path (an old socket file there is replaced).
Result<UniqueFd> listen_unix(const std::string& path);

// A non-blocking, close-on-exec eventfd.
Result<UniqueFd> make_eventfd();

// Sends one protocol message: value, with fd attached when fd >= 0.
Status send_message(int socket, int64_t value, int fd = -1);

// Writes 1 to an eventfd (a peer's interrupt); false if it failed.
bool signal_eventfd(int fd);

// Reads an eventfd until it is empty; the number of notifications it held.
uint64_t drain_eventfd(int fd);

// The protocol version this server speaks.
inline constexpr int64_t kIvshmemProtocolVersion = 0;

}  // namespace nvdla::vp
