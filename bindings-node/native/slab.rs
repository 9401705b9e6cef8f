//! A vector of slots with a free list: integer handles for objects that
//! live in Rust while JavaScript holds only a number.

pub struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value`; returns its handle (reusing freed slots first).
    pub fn insert(&mut self, value: T) -> u32 {
        if let Some(h) = self.free.pop() {
            self.slots[h as usize] = Some(value);
            return h;
        }
        self.slots.push(Some(value));
        u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
    }

    pub fn get(&self, h: u32) -> Option<&T> {
        self.slots.get(h as usize).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, h: u32) -> Option<&mut T> {
        self.slots.get_mut(h as usize).and_then(Option::as_mut)
    }

    pub fn remove(&mut self, h: u32) -> Option<T> {
        let v = self.slots.get_mut(h as usize).and_then(Option::take);
        if v.is_some() {
            self.free.push(h);
        }
        v
    }

    /// Live entries.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
