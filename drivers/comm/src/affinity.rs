//! CPU pinning with `sched_setaffinity(2)`: the driver pins itself (its load threads inherit
//! the mask), and the server is pinned in the child before it execs (see child.rs).

use std::io;
use std::mem;

/// A CPU set as the kernel takes it.
#[derive(Clone, Copy)]
pub struct CpuSet(libc::cpu_set_t);

impl CpuSet {
    /// The set of the listed CPUs; every one must exist in a `cpu_set_t`.
    pub fn from_list(cpus: &[usize]) -> Result<Self, String> {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        let limit = 8 * mem::size_of::<libc::cpu_set_t>();
        if cpus.is_empty() {
            return Err("the CPU list is empty".to_string());
        }
        for &cpu in cpus {
            if cpu >= limit {
                return Err(format!("CPU {cpu} is out of range (0..{limit})"));
            }
            // SAFETY: `cpu` is within the set, checked above.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        Ok(CpuSet(set))
    }

    /// Restricts the calling thread (and the threads it starts later) to this set.
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

    #[cfg(test)]
    fn of_current_thread() -> io::Result<Self> {
        // SAFETY: as above; the kernel fills at most size_of::<cpu_set_t>() bytes.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(CpuSet(set))
    }

    #[cfg(test)]
    fn same_as(&self, other: &CpuSet) -> bool {
        // SAFETY: both are valid sets.
        unsafe { libc::CPU_EQUAL(&self.0, &other.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lists_are_refused() {
        assert!(CpuSet::from_list(&[0, 100_000]).is_err());
        assert!(CpuSet::from_list(&[]).is_err());
    }

    #[test]
    fn pinning_the_current_thread_takes_effect() {
        // A thread of its own, so the test runner's other threads keep their masks.
        std::thread::spawn(|| {
            let cpu0 = CpuSet::from_list(&[0]).unwrap();
            cpu0.apply_to_current_thread().unwrap();
            assert!(CpuSet::of_current_thread().unwrap().same_as(&cpu0));
        })
        .join()
        .unwrap();
    }
}
