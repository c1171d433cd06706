import { useEffect, useState, type ReactNode } from 'react';
import { getToken, onUnauthorized, setToken } from './api/client';
import { ApprovalsPage } from './pages/Approvals';
import { ClusterPage } from './pages/Cluster';
import { EventsPage } from './pages/Events';
import { HooksPage } from './pages/Hooks';
import { InstallPage } from './pages/Install';
import { LoginPage } from './pages/Login';
import { RunToolPage } from './pages/RunTool';
import { SkillDetailPage } from './pages/SkillDetail';
import { SkillsPage } from './pages/Skills';
import { Link, match, useRouter } from './router';

const NAV = [
  { to: '/skills', label: 'Skills' },
  { to: '/install', label: 'Install' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/hooks', label: 'Hooks' },
  { to: '/events', label: 'Events' },
  { to: '/cluster', label: 'Cluster' },
];

function Layout({ children, onLogout }: { children: ReactNode; onLogout: () => void }) {
  const { path } = useRouter();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <span className="brand">palyra-host console</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} data-testid={`nav-${n.label.toLowerCase()}`} aria-current={path === n.to || path.startsWith(n.to + '/') ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary small" onClick={onLogout} data-testid="logout">
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no console page here. Go to the <Link to="/skills">skills</Link>.
      </p>
    </>
  );
}

function Routes() {
  const { path } = useRouter();
  let m: Record<string, string> | null;
  if (path === '/' || path === '/skills') return <SkillsPage />;
  if ((m = match('/skills/:id/tools/:tool', path))) return <RunToolPage key={`${m.id}/${m.tool}`} skillId={m.id} toolId={m.tool} />;
  if ((m = match('/skills/:id', path))) return <SkillDetailPage key={m.id} skillId={m.id} />;
  if (path === '/install') return <InstallPage />;
  if (path === '/hooks') return <HooksPage />;
  if (path === '/approvals') return <ApprovalsPage />;
  if (path === '/events') return <EventsPage />;
  if (path === '/cluster') return <ClusterPage />;
  return <NotFound />;
}

const TITLES: [string, string][] = [
  ['/skills/:id/tools/:tool', 'Run tool'],
  ['/skills/:id', 'Skill'],
  ['/install', 'Install'],
  ['/hooks', 'Hooks'],
  ['/approvals', 'Approvals'],
  ['/events', 'Events'],
  ['/cluster', 'Cluster'],
  ['/login', 'Sign in'],
];

export function App() {
  const { path, search, navigate } = useRouter();
  const [token, setTok] = useState<string | null>(() => getToken());
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(
    () =>
      onUnauthorized((e) => {
        setToken(null);
        setTok(null);
        setNotice(`You were signed out: ${e.code}: ${e.message}`);
      }),
    [],
  );

  useEffect(() => {
    const t = TITLES.find(([p]) => match(p, path));
    document.title = `${t ? t[1] : 'Skills'} · palyra-host`;
  }, [path]);

  // Without a token every page is the login screen; after signing in the
  // console goes where it was asked to (?next=).
  useEffect(() => {
    if (!token && path !== '/login') {
      const next = path === '/' ? '' : `?next=${encodeURIComponent(path + search)}`;
      navigate(`/login${next}`, { replace: true });
    }
  }, [token, path, search, navigate]);

  if (!token || path === '/login') {
    return (
      <LoginPage
        notice={notice}
        onLogin={(t) => {
          setToken(t);
          setTok(t);
          setNotice(null);
          const next = new URLSearchParams(window.location.search).get('next');
          navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/skills', { replace: true });
        }}
      />
    );
  }
  return (
    <Layout
      onLogout={() => {
        setToken(null);
        setTok(null);
        setNotice('You signed out.');
        navigate('/login', { replace: true });
      }}
    >
      <Routes />
    </Layout>
  );
}
