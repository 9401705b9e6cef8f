//! The wall clock, as every binding that reads it in Rust gives it to the
//! pipeline. Its own module so the pipeline (the tokio driver) reads it
//! without pointing up into the binding layer (`ffi`).

/// The wall clock in unix milliseconds, as every binding that reads it in
/// Rust gives it to the pipeline. Read twice per governed call (start and
/// handler settled), so on unix it goes straight to the vDSO
/// (`clock_gettime`, ≈ 25 ns here) instead of `SystemTime` and `Duration`
/// arithmetic (≈ 36 ns). A clock before 1970 reads as 0.
pub fn unix_now_ms() -> u64 {
    #[cfg(unix)]
    {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let millis = u64::try_from(ts.tv_nsec).unwrap_or(0) / 1_000_000;
        secs.saturating_mul(1000).saturating_add(millis)
    }
    #[cfg(not(unix))]
    {
        use std::time::{SystemTime, UNIX_EPOCH};
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// Unix milliseconds as an RFC 3339 UTC time with milliseconds
/// (`2026-12-07T09:30:00.000Z`), the form Cedar's `datetime` reads.
pub fn utc_rfc3339(ms: u64) -> String {
    let days = ms / 86_400_000;
    let in_day = ms % 86_400_000;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// Reads `YYYY-MM-DDThh:mm:ss[.fff]Z` (UTC only) as unix milliseconds;
/// `None` for anything else, or a time before 1970.
pub fn parse_utc_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<u64> {
        let s = text.get(from..from + len)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    let millis = match &text[19..] {
        "Z" => 0,
        rest if rest.len() == 5 && rest.starts_with('.') && rest.ends_with('Z') => digits(20, 3)?,
        _ => return None,
    };
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return None,
    };
    if year < 1970 || day == 0 || day > days_in_month || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

/// Days since 1970-01-01 → (year, month, day), for days ≥ 0 (Howard
/// Hinnant's civil-from-days, on unsigned values).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// (year ≥ 1970, month, day) → days since 1970-01-01.
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_both_ways() {
        assert_eq!(utc_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc_rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        for ms in [0, 951_782_400_123, 1_796_636_400_000, 4_102_444_799_999] {
            assert_eq!(parse_utc_rfc3339(&utc_rfc3339(ms)), Some(ms));
        }
        assert_eq!(
            parse_utc_rfc3339("2026-12-07T09:30:00Z"),
            Some(1_796_635_800_000)
        );
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-12-07T24:00:00Z",
            "2026-12-07T09:30:00+01:00",
            "2026-12-07 09:30:00Z",
            "1969-12-31T23:59:59Z",
            "2026-12-07T09:30:00.5Z",
            "２026-12-07T09:30:00Z",
        ] {
            assert_eq!(parse_utc_rfc3339(bad), None, "{bad}");
        }
    }
}
