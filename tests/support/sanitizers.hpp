#pragma once
// Whether this build runs under AddressSanitizer: it keeps freed memory in quarantine (memory figures mean nothing
// there) and turns a crash into its own report and abort().

namespace xconn::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool under_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool under_address_sanitizer = true;
#else
inline constexpr bool under_address_sanitizer = false;
#endif
#else
inline constexpr bool under_address_sanitizer = false;
#endif

}  // namespace xconn::test
