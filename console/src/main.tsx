import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { App, loadExplorer } from './App';
import { architectureQuery } from './api/queries';
import { match } from './router';
import './styles.css';

const client = new QueryClient({
  defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false } },
});

// Opened on the explorer: its code and the snapshot are fetched at once, side by side with the
// caller's read, rather than one after the other once the page would render.
const route = match(window.location.pathname);
if (route.page === 'explorer') {
  void loadExplorer();
  void client.prefetchQuery(architectureQuery(route.ws, route.audit));
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
