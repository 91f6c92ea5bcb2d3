// Errors as values: a Status carries a sentence a user can act on ("feature cube: line stride
// 100 is not a multiple of 32 bytes"), a Result<T> carries a value or that sentence.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

#include "nvdla/api.hpp"

namespace nvdla {

class [[nodiscard]] Status {
  public:
    Status() = default;  // success

    static Status failure(std::string message) {
        Status s;
        s.failed_ = true;
        s.message_ = std::move(message);
        return s;
    }

    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    const std::string& message() const { return message_; }

    // Prefixes the message with what was being done ("pack feature cube: ...").
    Status& context(const std::string& what) {
        if (failed_) message_ = what + ": " + message_;
        return *this;
    }

  private:
    bool failed_ = false;
    std::string message_;
};

// Builds a failed Status from the streamed pieces: error("stride ", 100, " is too small").
template <class... Parts>
Status error(const Parts&... parts) {
    std::ostringstream out;
    (out << ... << parts);
    return Status::failure(out.str());
}

template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
    Result(Status failure) : v_(std::move(failure)) {  // NOLINT
        if (std::get<Status>(v_).ok()) std::abort();   // a Result must not hold a success Status
    }

    bool ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return ok(); }

    const T& value() const& { return std::get<T>(v_); }
    T& value() & { return std::get<T>(v_); }
    T&& value() && { return std::get<T>(std::move(v_)); }
    const T& operator*() const& { return value(); }
    const T* operator->() const { return &value(); }

    Status status() const { return ok() ? Status() : std::get<Status>(v_); }
    const std::string& message() const {
        static const std::string none;
        return ok() ? none : std::get<Status>(v_).message();
    }

  private:
    std::variant<T, Status> v_;
};

}  // namespace nvdla
