// Lab 14: a float atomicMax, built from the integer atomics the hardware has.
//
// CUDA has atomicMax for int and unsigned but not for float. The technique here: read the
// float's bits as an integer and choose the integer atomic whose order matches float order on
// that half of the number line.
//
//   sign bit clear (+0.0, positive numbers, +inf, and our NaN): as signed ints these bit
//   patterns are non-negative and ordered exactly like the floats, so a signed atomicMax
//   works. Every negative float has the sign bit set, i.e. is a negative int, so it loses to
//   any of these, as it should.
//
//   sign bit set (-0.0, negative numbers, -inf): a larger magnitude means a larger unsigned
//   integer but a smaller float, so the float maximum is the unsigned *minimum*: use
//   atomicMin on unsigned. Every bit pattern with the sign bit clear is a smaller unsigned
//   number, so a non-negative value already stored is kept, as it should be.
//
// -0.0 (0x80000000) takes the second branch and is the smallest unsigned pattern with the sign
// bit set: it beats every negative number and loses to +0.0 (0x00000000, first branch). So
// +0.0 > -0.0, whatever order the two arrive in.
//
// NaN: a NaN input is first replaced by one canonical NaN, 0x7FFFFFFF (CUDA's own NaN), the
// largest signed int. It takes the first branch and beats everything; once stored, no signed
// atomicMax can exceed it and no unsigned atomicMin can go below it, so the result stays NaN.
// Without this step a NaN with the sign bit set (0xFFC00000, say) would take the second branch
// and lose to every negative number.
//
// Contract (as atomicMax): returns the value *address held just before this call, and leaves
// *address = max(old, value) with NaN > +inf > ... > +0.0 > -0.0 > ... > -inf. *address must
// hold a number or the canonical NaN when the first call arrives (not a NaN with its sign bit
// set, which this order would rank below -inf).
#pragma once

#include <cuda_runtime.h>

namespace reduce {

/// The canonical NaN atomic_max stores: 0x7FFFFFFF, above every other float as a signed int.
constexpr unsigned kCanonicalNanBits = 0x7FFFFFFFu;

/// Atomically replaces *address by max(*address, value) in IEEE 754-2019 order (NaN wins and
/// is stored as the canonical NaN; +0.0 > -0.0) and returns the previous value.
__device__ __forceinline__ float atomic_max(float* address, float value) {
  int bits = __float_as_int(value);
  if (isnan(value)) bits = static_cast<int>(kCanonicalNanBits);
  if (bits >= 0) {  // sign bit clear: signed order is float order
    return __int_as_float(atomicMax(reinterpret_cast<int*>(address), bits));
  }
  // sign bit set: float order is reversed unsigned order
  return __uint_as_float(
      atomicMin(reinterpret_cast<unsigned int*>(address), static_cast<unsigned int>(bits)));
}

}  // namespace reduce
