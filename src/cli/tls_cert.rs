//! `hullsweep tls-cert`: a server certificate and key for `serve --tls-cert/--tls-key`, signed by
//! a throwaway CA whose key is discarded, so its ca.pem vouches for this one certificate only.

use anyhow::{Context, bail};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Make a TLS certificate for `hullsweep serve`, for networks without a CA of their own.
///
/// Writes into DIR: cert.pem (the server's certificate, for --tls-cert), key.pem (its private
/// key, mode 0600, for --tls-key) and ca.pem (the CA that signed it; its key is never written,
/// so it can sign nothing else). Clients then verify the server by ca.pem, which also checks
/// the name they connect to against --host, or by pinning cert.pem itself (names not checked).
/// Existing files are not replaced.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Folder to write cert.pem, key.pem and ca.pem into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// A DNS name or IP address clients will connect to (repeatable); verification by ca.pem
    /// accepts only these names.
    #[arg(long = "host", value_name = "NAME", default_values_t = ["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()])]
    hosts: Vec<String>,
    /// Days the certificate is valid from today.
    #[arg(long, value_name = "N", default_value_t = 365, value_parser = clap::value_parser!(u32).range(1..=3650))]
    days: u32,
}

/// Creates `path` with `text`, never replacing a file; `private` files are 0600 from the start.
fn create(path: &Path, text: &str, private: bool) -> anyhow::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if private { 0o600 } else { 0o644 })
        .open(path)
        .with_context(|| {
            format!(
                "creating {} (an existing file is never replaced)",
                path.display()
            )
        })?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The UTC date `days` from today as (year, month, day).
fn date_in(days: i64) -> anyhow::Result<(i32, u8, u8)> {
    let d = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .checked_add(jiff::Span::new().days(days))
        .context("certificate dates out of range")?;
    Ok((i32::from(d.year()), d.month() as u8, d.day() as u8))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose, date_time_ymd,
    };
    let dir = &args.out;
    let paths = ["cert.pem", "key.pem", "ca.pem"].map(|f| dir.join(f));
    if let Some(there) = paths.iter().find(|p| p.exists()) {
        bail!(
            "{} already exists; choose another --out or remove it (files are never replaced)",
            there.display()
        );
    }
    let (y0, m0, d0) = date_in(-1)?; // a day early, for clocks that run behind
    let (y1, m1, d1) = date_in(i64::from(args.days))?;

    let ca_key = KeyPair::generate().context("generating the CA's key")?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).context("CA parameters")?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.distinguished_name
        .push(DnType::CommonName, "hullsweep serve throwaway CA");
    ca.not_before = date_time_ymd(y0, m0, d0);
    ca.not_after = date_time_ymd(y1, m1, d1);
    let ca_cert = ca.self_signed(&ca_key).context("signing the CA")?;
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate().context("generating the server's key")?;
    let mut server = CertificateParams::new(args.hosts.clone()).with_context(|| {
        format!(
            "--host {:?}: each must be a DNS name or an IP address",
            args.hosts
        )
    })?;
    server
        .distinguished_name
        .push(DnType::CommonName, args.hosts[0].as_str());
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.not_before = date_time_ymd(y0, m0, d0);
    server.not_after = date_time_ymd(y1, m1, d1);
    let cert = server
        .signed_by(&key, &issuer)
        .context("signing the server certificate")?;
    drop(issuer); // the CA's key dies here: ca.pem can vouch for nothing else

    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    create(&paths[1], &key.serialize_pem(), true)?;
    create(&paths[0], &cert.pem(), false)?;
    create(&paths[2], &ca_cert.pem(), false)?;
    let [c, k, a] = paths.map(|p| p.display().to_string());
    println!(
        "wrote {c} (for --tls-cert; sha256 {}), {k} (for --tls-key, mode 0600), {a} (the CA \
         clients verify it by; names: {})",
        hullsweep_engine::tls::fingerprint(cert.der()),
        args.hosts.join(", ")
    );
    println!(
        "server: hullsweep serve --tcp 0.0.0.0:7070 --token-file TOKEN --tls-cert {c} --tls-key {k}"
    );
    println!("clients: verify by {a} (the name connected to must be one of the above) or pin {c}");
    Ok(())
}
