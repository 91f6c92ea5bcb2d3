#include "ivshmem.hpp"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nvdla::vp {

void UniqueFd::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

Status errno_failure(const std::string& what) {
    const int e = errno;
    return error(what, ": ", std::strerror(e));
}

Result<UniqueFd> listen_unix(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        return error(path, ": the socket path is longer than ", sizeof(addr.sun_path) - 1,
                     " bytes");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return errno_failure("socket");
    ::unlink(path.c_str());
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0)
        return errno_failure("bind " + path);
    if (::listen(fd.get(), 4) != 0) return errno_failure("listen " + path);
    return fd;
}

Result<UniqueFd> make_eventfd() {
    UniqueFd fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!fd.valid()) return errno_failure("eventfd");
    return fd;
}

Status send_message(int socket, int64_t value, int fd) {
    // The protocol is little endian; so is every host this builds on (checked in vp_instance).
    iovec iov{&value, sizeof(value)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    for (;;) {
        const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
        if (n == static_cast<ssize_t>(sizeof(value))) return Status();
        if (n < 0 && errno == EINTR) continue;
        if (n >= 0) return error("sendmsg: short write (", n, " bytes)");
        return errno_failure("sendmsg");
    }
}

bool signal_eventfd(int fd) {
    const uint64_t one = 1;
    for (;;) {
        const ssize_t n = ::write(fd, &one, sizeof(one));
        if (n == sizeof(one)) return true;
        if (n < 0 && errno == EINTR) continue;
        // EAGAIN: the counter is at its maximum, the peer has interrupts pending anyway.
        return n < 0 && errno == EAGAIN;
    }
}

uint64_t drain_eventfd(int fd) {
    uint64_t total = 0, value = 0;
    for (;;) {
        const ssize_t n = ::read(fd, &value, sizeof(value));
        if (n == sizeof(value)) {
            total += value;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return total;
    }
}

}  // namespace nvdla::vp
