//! CPU pinning with `sched_setaffinity(2)`: a driver pins its own thread (threads it starts
//! later inherit the mask) and the implementation, either in the child before it execs or
//! through the spawning thread's mask (see process.rs).

use std::io;
use std::mem;

/// A CPU set as the kernel takes it.
#[derive(Clone, Copy)]
pub struct CpuSet(libc::cpu_set_t);

impl CpuSet {
    /// The set of the listed CPUs: not empty, and every one must fit in a `cpu_set_t`.
    pub fn from_list(cpus: &[usize]) -> Result<Self, String> {
        if cpus.is_empty() {
            return Err("the CPU list is empty".to_string());
        }
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        let limit = Self::limit();
        for &cpu in cpus {
            if cpu >= limit {
                return Err(format!("CPU {cpu} is out of range (0..{limit})"));
            }
            // SAFETY: `cpu` is within the set, checked above.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        Ok(CpuSet(set))
    }

    /// How many CPUs a `cpu_set_t` can name.
    pub fn limit() -> usize {
        8 * mem::size_of::<libc::cpu_set_t>()
    }

    /// The mask the calling thread runs with now.
    pub fn of_current_thread() -> io::Result<Self> {
        // SAFETY: as above; the kernel fills at most size_of::<cpu_set_t>() bytes.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(CpuSet(set))
    }

    /// Restricts the calling thread (and the threads it starts later) to this set. It takes
    /// effect at once: a thread on a CPU outside the set is migrated before the call returns.
    pub fn apply_to_current_thread(&self) -> io::Result<()> {
        if self.apply_raw() != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// `sched_setaffinity` for the caller, returning the raw result: async-signal-safe, for
    /// the child between fork and exec.
    pub fn apply_raw(&self) -> libc::c_int {
        // SAFETY: passes a valid cpu_set_t of the size given.
        unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &self.0) }
    }

    pub fn same_as(&self, other: &CpuSet) -> bool {
        // SAFETY: both are valid sets.
        unsafe { libc::CPU_EQUAL(&self.0, &other.0) }
    }

    /// The CPUs in the set, in increasing order.
    pub fn cpus(&self) -> Vec<usize> {
        // SAFETY: every index is below the set's size.
        (0..Self::limit())
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &self.0) })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lists_are_refused() {
        assert!(CpuSet::from_list(&[0, 100_000]).is_err());
        assert!(CpuSet::from_list(&[]).is_err());
        assert_eq!(CpuSet::from_list(&[3, 1]).unwrap().cpus(), vec![1, 3]);
    }

    #[test]
    fn pinning_the_current_thread_round_trips() {
        // A thread of its own, so the test runner's other threads keep their masks.
        std::thread::spawn(|| {
            let before = CpuSet::of_current_thread().unwrap();
            let first = before.cpus()[0];
            let one = CpuSet::from_list(&[first]).unwrap();
            one.apply_to_current_thread().unwrap();
            assert!(CpuSet::of_current_thread().unwrap().same_as(&one));
            assert_eq!(CpuSet::of_current_thread().unwrap().cpus(), vec![first]);
            before.apply_to_current_thread().unwrap();
            assert!(CpuSet::of_current_thread().unwrap().same_as(&before));
        })
        .join()
        .unwrap();
    }
}
