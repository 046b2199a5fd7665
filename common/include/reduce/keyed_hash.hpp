/// \file
/// \brief A keyed hash that cannot be inverted (SipHash-2-4), and the keys every graded input is
/// made from: derive_key() of the grading secret and a label, and KeyedStream, a counter-mode
/// generator over such a key.
///
/// Why: the generators (generators.hpp) expand a seed through splitmix64's finaliser, which
/// inverts, so a few values of an input give back its seed. If that seed were the grading seed
/// plus a constant, one public test's input would give every other input of the grading. Every
/// seed is therefore a SipHash of the secret: knowing one input whole, or its seed, tells nothing
/// about the secret, another input or the benchmark's inputs.
///
/// Why by hand: no library that both the grading machine's image and Debian ship gives device
/// code a keyed hash, and the grader (plain C++17, built without nvcc) derives keys with the very
/// same code. This is the reference algorithm of Aumasson and Bernstein, "SipHash: a fast
/// short-input PRF" (2012), with 2 compression and 4 finalisation rounds, 128-bit key and 64-bit
/// output; the CPU test (autograder/tests/cpu/keyed_hash_test.cpp) checks it against the 64
/// published vectors of the reference implementation (github.com/veorq/SipHash, vectors.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#ifndef REDUCE_HOST_DEVICE
/// Marks what device code may call too (the same definition as generators.hpp's).
#if defined(__CUDACC__)
#define REDUCE_HOST_DEVICE __host__ __device__
#else
#define REDUCE_HOST_DEVICE
#endif
#endif

namespace reduce {

/// A 128-bit SipHash key: k0 is the little-endian reading of key bytes 0..7, k1 of bytes 8..15.
struct SipKey {
  std::uint64_t k0 = 0;  ///< key bytes 0..7
  std::uint64_t k1 = 0;  ///< key bytes 8..15
};

namespace siphash_detail {

/// Rotation left by \p b (0 < b < 64).
REDUCE_HOST_DEVICE constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept {
  return (x << b) | (x >> (64 - b));
}

/// SipHash's internal state, v0..v3.
struct State {
  std::uint64_t v0;  ///< the key's first half mixed with "somepseu"
  std::uint64_t v1;  ///< the key's second half mixed with "dorandom"
  std::uint64_t v2;  ///< the key's first half mixed with "lygenera"
  std::uint64_t v3;  ///< the key's second half mixed with "tedbytes"

  /// The state of \p key before the first message word.
  REDUCE_HOST_DEVICE constexpr explicit State(SipKey key) noexcept
      : v0(0x736f6d6570736575ull ^ key.k0),
        v1(0x646f72616e646f6dull ^ key.k1),
        v2(0x6c7967656e657261ull ^ key.k0),
        v3(0x7465646279746573ull ^ key.k1) {}

  /// One SipRound.
  REDUCE_HOST_DEVICE constexpr void round() noexcept {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }

  /// Compresses one 64-bit message word (2 rounds: SipHash-2-4's c).
  REDUCE_HOST_DEVICE constexpr void absorb(std::uint64_t m) noexcept {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }

  /// Finalises (4 rounds: SipHash-2-4's d) and returns the 64-bit output.
  REDUCE_HOST_DEVICE constexpr std::uint64_t finish() noexcept {
    v2 ^= 0xff;
    round();
    round();
    round();
    round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

}  // namespace siphash_detail

/// SipHash-2-4 of the \p length bytes at \p data under \p key: the reference algorithm, whose
/// 64-bit output the reference implementation writes as 8 little-endian bytes.
REDUCE_HOST_DEVICE constexpr std::uint64_t siphash24(SipKey key, const unsigned char* data,
                                                     std::size_t length) noexcept {
  siphash_detail::State s(key);
  const std::size_t whole = length / 8 * 8;
  for (std::size_t at = 0; at < whole; at += 8) {
    std::uint64_t m = 0;
    for (int b = 0; b < 8; ++b) m |= std::uint64_t{data[at + b]} << (8 * b);
    s.absorb(m);
  }
  std::uint64_t last = static_cast<std::uint64_t>(length) << 56;
  for (std::size_t b = 0; whole + b < length; ++b)
    last |= std::uint64_t{data[whole + b]} << (8 * b);
  s.absorb(last);
  return s.finish();
}

/// SipHash-2-4 of one 64-bit word \p m under \p key, the message being m's 8 little-endian bytes:
/// the counter-mode step of KeyedStream, cheap enough for device code.
REDUCE_HOST_DEVICE constexpr std::uint64_t siphash24(SipKey key, std::uint64_t m) noexcept {
  siphash_detail::State s(key);
  s.absorb(m);
  s.absorb(std::uint64_t{8} << 56);
  return s.finish();
}

/// The 128-bit SipHash key of a 64-bit secret: k0 = \p secret, k1 = the fixed constant
/// 0x6b6579732e726564 ("keys.red" read as a big-endian number, a domain tag). Fixed for good: the
/// grader and the course's binaries must derive the same keys from the same secret.
REDUCE_HOST_DEVICE constexpr SipKey expand_key(std::uint64_t secret) noexcept {
  return SipKey{secret, 0x6b6579732e726564ull};
}

/// A 64-bit key for one use of \p secret: SipHash-2-4 under expand_key(secret) of the message
/// "reduce.key" 0x00, \p label, 0x00, then each of \p numbers as 8 little-endian bytes. The 0x00
/// after the label (a label holds none) ends it, so that no two (label, numbers) share a
/// message. Without the secret, no output says anything about another label's or another
/// number's key, nor about the secret (SipHash is a PRF).
inline std::uint64_t derive_key(std::uint64_t secret, std::string_view label,
                                std::initializer_list<std::uint64_t> numbers = {}) {
  std::string message("reduce.key", 10);
  message.push_back('\0');
  message.append(label.data(), label.size());
  message.push_back('\0');
  for (std::uint64_t v : numbers)
    for (int b = 0; b < 8; ++b) message.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  return siphash24(expand_key(secret), reinterpret_cast<const unsigned char*>(message.data()),
                   message.size());
}

/// derive_key(\p secret, \p label, {\p numbers...}) for numbers of any integer type.
template <typename... Numbers>
std::uint64_t derive_key(std::uint64_t secret, std::string_view label, Numbers... numbers) {
  return derive_key(secret, label, {static_cast<std::uint64_t>(numbers)...});
}

/// The seed of one input of a test or hidden test: derive_key(\p secret, "test:" + \p test_name,
/// \p numbers), where \p secret is the grading secret (the checkers' REDUCE_SEED), \p test_name
/// the lab's name and the GoogleTest test's full name ("04_sequential:Suite.Test") and \p numbers
/// the call site's (autograder/tests/gpu_test.hpp's input_seed()).
inline std::uint64_t test_input_key(std::uint64_t secret, std::string_view test_name,
                                    std::initializer_list<std::uint64_t> numbers = {}) {
  std::string label("test:");
  label.append(test_name.data(), test_name.size());
  return derive_key(secret, label, numbers);
}

/// The key a grading gives the benchmark (its REDUCE_SEED): derive_key(\p secret, "benchmark",
/// {\p attempt}). Its label is no test's, so the benchmark's inputs are independent of every
/// test's; \p attempt numbers the benchmark's runs of one grading (a rerun gets fresh inputs).
inline std::uint64_t benchmark_key(std::uint64_t secret, std::uint64_t attempt) {
  return derive_key(secret, "benchmark", {attempt});
}

/// A counter-mode generator over a key: the k-th output is SipHash-2-4(key, k). It satisfies
/// UniformRandomBitGenerator (std::uniform_int_distribution, std::shuffle...), and unlike
/// std::mt19937_64 no run of outputs gives back its state: outputs tell nothing about the key or
/// about the outputs not seen.
class KeyedStream {
 public:
  /// The type of every output.
  using result_type = std::uint64_t;

  /// The stream of expand_key(\p key) from counter 0.
  REDUCE_HOST_DEVICE constexpr explicit KeyedStream(std::uint64_t key) noexcept
      : key_(expand_key(key)) {}

  /// The next output.
  REDUCE_HOST_DEVICE constexpr result_type operator()() noexcept {
    return siphash24(key_, counter_++);
  }

  /// The smallest output.
  static constexpr result_type min() noexcept { return 0; }
  /// The largest output.
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

  /// Outputs drawn so far.
  REDUCE_HOST_DEVICE constexpr std::uint64_t drawn() const noexcept { return counter_; }

 private:
  SipKey key_;
  std::uint64_t counter_ = 0;
};

/// The benchmark's stream for \p purpose (e.g. "graded": every graded row's input seeds and
/// random choices) under \p key, the benchmark's REDUCE_SEED: KeyedStream(derive_key(key,
/// purpose)). Distinct purposes give independent streams.
inline KeyedStream benchmark_stream(std::uint64_t key, std::string_view purpose) {
  return KeyedStream(derive_key(key, purpose));
}

}  // namespace reduce
