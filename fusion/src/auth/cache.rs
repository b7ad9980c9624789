//! Tokens already verified: the principal of each, keyed by the SHA-256 of the token (never
//! the token), kept until the token's `exp` and no longer than its key stays in the key set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest as _, Sha256};

use super::Principal;
use super::jwks::KeySet;

/// The SHA-256 of a token.
pub(super) type Digest = [u8; 32];

pub(super) fn digest(token: &str) -> Digest {
    Sha256::digest(token.as_bytes()).into()
}

/// A verified token.
pub(super) struct Verified {
    pub(super) principal: Principal,
    /// The token's `exp`, in seconds since the Unix epoch: the entry is gone from then on.
    pub(super) exp: u64,
    /// The serial of the key set's key that verified it; `None`: a key given at start-up.
    pub(super) key: Option<u64>,
}

/// A bounded map of verified tokens. When full, expired entries go first, then an arbitrary
/// eighth of the others.
pub(super) struct TokenCache {
    capacity: usize,
    entries: Mutex<Entries>,
    /// How many looks found no entry: each is followed by a signature check.
    misses: AtomicU64,
}

#[derive(Default)]
struct Entries {
    map: HashMap<Digest, Verified>,
    /// The key set generation the entries were last checked against.
    generation: u64,
}

impl TokenCache {
    pub(super) fn new(capacity: usize) -> TokenCache {
        TokenCache {
            capacity,
            entries: Mutex::default(),
            misses: AtomicU64::new(0),
        }
    }

    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The principal of a token verified before, if it has not expired at `now` (seconds since
    /// the Unix epoch) and its key is still in `keys`. When the key set changed since the last
    /// look, entries whose key left it are dropped.
    pub(super) fn get(
        &self,
        digest: &Digest,
        now: u64,
        keys: Option<&KeySet>,
    ) -> Option<Principal> {
        self.misses.fetch_add(1, Ordering::Relaxed);
        if self.capacity == 0 {
            return None;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(keys) = keys
            && keys.generation != entries.generation
        {
            entries
                .map
                .retain(|_, entry| entry.key.is_none_or(|serial| keys.holds(serial)));
            entries.generation = keys.generation;
        }
        let entry = entries.map.get(digest)?;
        // An entry stored after the purge, by a request that checked against the set before.
        let key_left = entry
            .key
            .is_some_and(|serial| keys.is_none_or(|keys| !keys.holds(serial)));
        if now >= entry.exp || key_left {
            entries.map.remove(digest);
            return None;
        }
        self.misses.fetch_sub(1, Ordering::Relaxed);
        Some(entry.principal.clone())
    }

    /// Stores a token verified at `now`.
    pub(super) fn insert(&self, digest: Digest, verified: Verified, now: u64) {
        if self.capacity == 0 || verified.exp <= now {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.map.len() >= self.capacity {
            entries.map.retain(|_, entry| entry.exp > now);
        }
        if entries.map.len() >= self.capacity {
            let evicted: Vec<Digest> = entries
                .map
                .keys()
                .take(self.capacity / 8 + 1)
                .copied()
                .collect();
            for digest in &evicted {
                entries.map.remove(digest);
            }
        }
        entries.map.insert(digest, verified);
    }

    /// How many looks found no entry.
    #[cfg(test)]
    pub(super) fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verified(exp: u64) -> Verified {
        Verified {
            principal: Principal::new("alice"),
            exp,
            key: None,
        }
    }

    #[test]
    fn an_entry_lives_until_its_exp() {
        let cache = TokenCache::new(10);
        cache.insert(digest("a"), verified(100), 50);
        assert!(cache.get(&digest("a"), 99, None).is_some());
        assert!(cache.get(&digest("b"), 99, None).is_none());
        assert!(cache.get(&digest("a"), 100, None).is_none());
        assert_eq!(cache.len(), 0);
        cache.insert(digest("c"), verified(100), 100);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn a_full_cache_drops_expired_entries_then_others() {
        let cache = TokenCache::new(16);
        for i in 0..8 {
            cache.insert(digest(&format!("old{i}")), verified(60), 0);
        }
        for i in 0..8 {
            cache.insert(digest(&format!("new{i}")), verified(600), 0);
        }
        cache.insert(digest("late"), verified(600), 100);
        assert_eq!(cache.len(), 9);
        for i in 0..100 {
            cache.insert(digest(&format!("more{i}")), verified(600), 100);
            assert!(cache.len() <= 16);
        }
        assert!(cache.get(&digest("more99"), 100, None).is_some());
    }

    #[test]
    fn an_entry_goes_when_its_key_leaves_the_set() {
        let cache = TokenCache::new(10);
        let signed = |serial| Verified {
            key: Some(serial),
            ..verified(100)
        };
        let before = KeySet::of_serials(&[1, 2], 1);
        assert!(cache.get(&digest("none"), 0, Some(&before)).is_none());
        cache.insert(digest("a"), signed(1), 0);
        cache.insert(digest("b"), signed(2), 0);
        let after = KeySet::of_serials(&[2, 3], 2);
        assert!(cache.get(&digest("a"), 0, Some(&after)).is_none());
        assert!(cache.get(&digest("b"), 0, Some(&after)).is_some());
        assert_eq!(cache.len(), 1);
        // Stored by a request that checked against the old set, after the purge.
        cache.insert(digest("late"), signed(1), 0);
        assert!(cache.get(&digest("late"), 0, Some(&after)).is_none());
    }

    #[test]
    fn a_cache_of_no_capacity_keeps_nothing() {
        let cache = TokenCache::new(0);
        cache.insert(digest("a"), verified(100), 0);
        assert!(cache.get(&digest("a"), 1, None).is_none());
        assert_eq!(cache.misses(), 1);
    }
}
