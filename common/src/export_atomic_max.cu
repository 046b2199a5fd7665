// Lab 14's atomic_max is tested, not benchmarked: nothing to export beyond the library's own
// atomic_max_apply (its benchmark is lab 14's maximum).
