package capnpbench

// RNG is Marsaglia's xorshift128 with the SPEC's seed (§3.1). Every client owns one,
// created at start and never reset, so warm-up and timed iterations draw one sequence.
type RNG struct {
	x, y, z, w uint32
}

// NewRNG returns the generator in its seeded state.
func NewRNG() *RNG {
	return &RNG{x: 0x1d2acd47, y: 0x58ca3e14, z: 0xf563f232, w: 0x0bc76199}
}

// Next returns the next 32-bit output.
func (r *RNG) Next() uint32 {
	t := r.x ^ (r.x << 11)
	r.x, r.y, r.z = r.y, r.z, r.w
	r.w = r.w ^ (r.w >> 19) ^ t ^ (t >> 8)
	return r.w
}

// Rand is fastRand(n): Next() % n.
func (r *RNG) Rand(n uint32) uint32 {
	return r.Next() % n
}

// Double is fastRandDouble(scale): (double(Next()) * scale) / 4294967295.0, multiplied before
// it is divided as the SPEC says, since the other order rounds differently.
func (r *RNG) Double(scale float64) float64 {
	return float64(r.Next()) * scale / 4294967295.0
}
