// A whole .loupe trace as bytes, mapped read-only where possible (no copy,
// no zeroing of fresh memory: a 66 MB trace costs page-cache mappings, not a
// 66 MB buffer), else read into memory (pipes, special files, non-POSIX).
// Used by the CLI: conversions read a trace twice, faulted in at once;
// `loupe merge` reads its inputs front to back (use::sequential) and drops
// the pages it has read (release), so that an input costs a window of its
// pages, not its size. The magic bytes are checked before the file is
// mapped or read: anything else fails at once with a trace_error at byte 0.
//
// The mapping assumes the file does not shrink while it is mapped (a .loupe
// file is only ever appended to); bytes appended meanwhile are not seen.
#pragma once

#include "loupe/base/config.hpp"

#if LOUPE_OS_POSIX
#    include <fcntl.h>
#    include <sys/mman.h>
#    include <sys/stat.h>
#    include <unistd.h>
#endif

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/format/wire.hpp"

namespace loupe::detail {

class mapped_file {
public:
    /// How the bytes will be read.
    enum class use {
        whole,       ///< all of them, maybe more than once: faulted in at once
        sequential,  ///< front to back, what was read dropped with release()
    };

    /// Throws loupe::error naming `path` when it cannot be read, trace_error
    /// when it is not a .loupe trace.
    explicit mapped_file(const std::string& path, use how = use::whole) {
#if LOUPE_OS_POSIX
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st {};
        unsigned char head[sizeof format::magic] = {};
        if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            const ssize_t got = ::pread(fd, head, sizeof head, 0);
            if (got != static_cast<ssize_t>(sizeof head) || std::memcmp(head, format::magic, sizeof head) != 0) {
                ::close(fd);
                throw trace_error(0, "not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A", false,
                                  path);
            }
            int flags = MAP_PRIVATE;
#    if defined(MAP_POPULATE)
            if (how == use::whole) flags |= MAP_POPULATE;  // both passes read it all: fault it in at once
#    endif
            void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, flags, fd, 0);
            if (p != MAP_FAILED) {
                map_ = p;
                size_ = static_cast<std::size_t>(st.st_size);
                if (how == use::sequential) {
                    ::madvise(map_, size_, MADV_SEQUENTIAL);  // read ahead
#    if defined(MADV_NOHUGEPAGE)
                    // Only the pages being read stay mapped (release): a
                    // kernel that maps the page cache's 2 MiB folios whole
                    // would keep up to 2 MiB per input in memory.
                    ::madvise(map_, size_, MADV_NOHUGEPAGE);
#    endif
                }
            }
        }
        if (fd >= 0) ::close(fd);
        if (map_ != nullptr) return;
#endif
        copy_ = read_trace_bytes(path);
        size_ = copy_.size();
    }
    ~mapped_file() {
#if LOUPE_OS_POSIX
        if (map_ != nullptr) ::munmap(map_, size_);
#endif
    }
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;

    const unsigned char* data() const noexcept {
        return map_ != nullptr ? static_cast<const unsigned char*>(map_) : copy_.data();
    }
    std::size_t size() const noexcept { return size_; }

    /// Drops the pages wholly inside bytes [begin, end) from memory, when
    /// mapped (else nothing): the bytes stay readable, read again from the
    /// file (the page cache) if touched.
    void release(std::size_t begin, std::size_t end) noexcept {
#if LOUPE_OS_POSIX
        if (map_ == nullptr) return;
        static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        begin = (begin + page - 1) / page * page;
        end = end >= size_ ? size_ : end / page * page;  // the last page may end past the file's end
        if (end > begin) ::madvise(static_cast<unsigned char*>(map_) + begin, end - begin, MADV_DONTNEED);
#else
        (void)begin;
        (void)end;
#endif
    }

private:
    void* map_ = nullptr;
    std::size_t size_ = 0;
    std::vector<unsigned char> copy_;
};

}  // namespace loupe::detail
