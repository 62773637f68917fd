//! Where the numba side lives: the reference scripts and the Python environment (`.venv`) that
//! runs them, in the checkout a command starts in or else a per-user folder, never elsewhere.
//!
//! An installed binary must work without its source tree and must not write into the checkout
//! it was built from: so the reference scripts are compiled in, and the folder is chosen at run
//! time, in this order:
//!
//! 1. `HULLSWEEP_HOME=DIR`: that folder (a checkout is used as one, anything else is filled);
//! 2. the source checkout holding the current directory (the nearest ancestor with
//!    `reference/hullsweep_ref.py` and `gate/Cargo.toml`): its `reference/` and `.venv`;
//! 3. `$XDG_DATA_HOME/hullsweep`, else `$HOME/.local/share/hullsweep`.
//!
//! Outside a checkout the folder receives the compiled-in `reference/` files (rewritten when
//! they differ, so a newer binary brings its own oracle) and `.venv` beside them.

use anyhow::{Context, bail};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The folder to use instead of the checkout or the per-user one.
pub const HOME_ENV: &str = "HULLSWEEP_HOME";

/// The reference files the numba side needs, as this binary was built with them.
const REFERENCE: [(&str, &str); 4] = [
    (
        "hullsweep_ref.py",
        include_str!("../../reference/hullsweep_ref.py"),
    ),
    (
        "requirements.txt",
        include_str!("../../reference/requirements.txt"),
    ),
    (
        "requirements-ray.txt",
        include_str!("../../reference/requirements-ray.txt"),
    ),
    (
        "requirements-lab.txt",
        include_str!("../../reference/requirements-lab.txt"),
    ),
];

/// How the home was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Named by [`HOME_ENV`].
    Env,
    /// The source checkout the command was started in.
    Checkout,
    /// The per-user data folder.
    User,
}

/// The folder holding `reference/` and `.venv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Home {
    /// The folder itself.
    pub dir: PathBuf,
    /// How it was chosen.
    pub found: Found,
}

impl Home {
    /// `reference/` in the home.
    pub fn reference(&self) -> PathBuf {
        self.dir.join("reference")
    }

    /// The Python environment's folder, `.venv` in the home.
    pub fn venv(&self) -> PathBuf {
        self.dir.join(".venv")
    }
}

/// True when `dir` is a hullsweep source checkout.
fn is_checkout(dir: &Path) -> bool {
    dir.join("reference").join("hullsweep_ref.py").is_file()
        && dir.join("gate").join("Cargo.toml").is_file()
}

/// The source checkout holding `start` (the nearest ancestor that is one), if any.
pub fn checkout_of(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| is_checkout(d))
        .map(Path::to_path_buf)
}

/// The source checkout holding the current directory, if any.
pub fn checkout() -> Option<PathBuf> {
    checkout_of(&std::env::current_dir().ok()?)
}

/// Chooses the home from the environment and the current directory, without touching disk.
///
/// `env` is [`HOME_ENV`]'s value, `cwd` the current directory, `data_home` and `user_home` the
/// values of `XDG_DATA_HOME` and `HOME`. Empty values count as unset.
pub fn choose(
    env: Option<&Path>,
    cwd: Option<&Path>,
    data_home: Option<&Path>,
    user_home: Option<&Path>,
) -> anyhow::Result<Home> {
    let set = |p: Option<&Path>| {
        p.filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
    };
    if let Some(dir) = set(env) {
        return Ok(Home {
            dir,
            found: Found::Env,
        });
    }
    if let Some(dir) = cwd.and_then(checkout_of) {
        return Ok(Home {
            dir,
            found: Found::Checkout,
        });
    }
    let dir = match (set(data_home), set(user_home)) {
        (Some(d), _) => d.join("hullsweep"),
        (None, Some(h)) => h.join(".local").join("share").join("hullsweep"),
        (None, None) => bail!(
            "outside a hullsweep checkout and with neither XDG_DATA_HOME nor HOME set, there is \
             no folder for the numba reference and its Python environment: set {HOME_ENV}=DIR"
        ),
    };
    Ok(Home {
        dir,
        found: Found::User,
    })
}

/// The home of this process (chosen once), its `reference/` filled outside a checkout.
pub fn home() -> anyhow::Result<&'static Home> {
    static HOME: OnceLock<Home> = OnceLock::new();
    if let Some(home) = HOME.get() {
        return Ok(home);
    }
    let var = |name| std::env::var_os(name).map(PathBuf::from);
    let home = choose(
        var(HOME_ENV).as_deref(),
        std::env::current_dir().ok().as_deref(),
        var("XDG_DATA_HOME").as_deref(),
        var("HOME").as_deref(),
    )?;
    if !is_checkout(&home.dir) {
        fill_reference(&home.reference())?;
    }
    Ok(HOME.get_or_init(|| home))
}

/// Writes the compiled-in reference files into `dir` where they are missing or differ; each is
/// written to a temporary name and renamed, so a concurrent reader sees a whole file.
pub fn fill_reference(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in REFERENCE {
        let path = dir.join(name);
        if fs::read_to_string(&path).ok().as_deref() == Some(text) {
            continue;
        }
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
        fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    #[test]
    fn the_checkout_is_found_from_any_folder_inside_it() {
        let inside = root().join("gate").join("src");
        assert_eq!(checkout_of(&inside).as_deref(), Some(root()));
        let home = choose(None, Some(&inside), None, Some(Path::new("/h"))).unwrap();
        assert_eq!((home.dir.as_path(), home.found), (root(), Found::Checkout));
    }

    #[test]
    fn outside_a_checkout_the_user_folder_is_used() {
        let out = tempfile::tempdir().unwrap();
        let h = Path::new("/h");
        let home = choose(None, Some(out.path()), None, Some(h)).unwrap();
        assert_eq!(home.dir, h.join(".local/share/hullsweep"));
        assert_eq!(home.found, Found::User);
        let xdg = Path::new("/x");
        let home = choose(None, Some(out.path()), Some(xdg), Some(h)).unwrap();
        assert_eq!(home.dir, xdg.join("hullsweep"));
        let empty = Path::new("");
        let err = choose(Some(empty), Some(out.path()), Some(empty), None).unwrap_err();
        assert!(err.to_string().contains(HOME_ENV), "{err}");
    }

    #[test]
    fn the_variable_wins_over_the_checkout() {
        let d = Path::new("/somewhere");
        let home = choose(Some(d), Some(root()), None, None).unwrap();
        assert_eq!((home.dir.as_path(), home.found), (d, Found::Env));
    }

    #[test]
    fn the_compiled_in_reference_is_the_checkouts_and_fills_a_folder() {
        for (name, text) in REFERENCE {
            let on_disk = fs::read_to_string(root().join("reference").join(name)).unwrap();
            assert_eq!(on_disk, text, "{name}");
        }
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("reference");
        fill_reference(&dir).unwrap();
        fs::write(dir.join("requirements.txt"), "stale").unwrap();
        fill_reference(&dir).unwrap();
        for (name, text) in REFERENCE {
            assert_eq!(fs::read_to_string(dir.join(name)).unwrap(), text, "{name}");
        }
        assert_eq!(fs::read_dir(&dir).unwrap().count(), REFERENCE.len());
    }
}
