// Seed 002's three client examples, verbatim (extracted from the seed text; do not edit). Tests run
// them unchanged except for the URL and key, swapped in by withUrl(). String.raw keeps every backslash.

/** The URL and key every example uses. */
export const SEED_URL = 'ws://localhost:18080/v1/ws?apiKey=sk-test-123';

/** Replaces the seed's URL (with its key) by a real one. */
export function withUrl(example: string, url: string): string {
  if (!example.includes(SEED_URL)) throw new Error('the example no longer contains the seed URL');
  return example.split(SEED_URL).join(url);
}

/** "JavaScript/Browser" */
export const BROWSER_EXAMPLE = String.raw`const ws = new WebSocket(
  'ws://localhost:18080/v1/ws?apiKey=sk-test-123'
);

ws.onopen = () => {
  console.log('Connected');
  
  // Send chat request
  ws.send(JSON.stringify({
    type: 'chat.message',
    model: 'gemini-2.5-pro',
    messages: [
      { role: 'user', content: 'Tell me a joke' }
    ],
    stream: true
  }));
};

ws.onmessage = (event) => {
  const data = JSON.parse(event.data);
  
  if (data.type === 'chat.chunk') {
    process.stdout.write(data.content);
    
    if (data.done) {
      console.log('\nComplete!');
      ws.close();
    }
  }
};

ws.onerror = (error) => {
  console.error('WebSocket error:', error);
};

ws.onclose = () => {
  console.log('Disconnected');
};
`;

/** "Python" */
export const PYTHON_EXAMPLE = String.raw`import asyncio
import websockets
import json

async def chat():
    uri = "ws://localhost:18080/v1/ws?apiKey=sk-test-123"
    
    async with websockets.connect(uri) as ws:
        # Send request
        await ws.send(json.dumps({
            "type": "chat.message",
            "model": "gemini-2.5-pro",
            "messages": [
                {"role": "user", "content": "Tell me a joke"}
            ],
            "stream": True
        }))
        
        # Receive chunks
        async for message in ws:
            data = json.loads(message)
            
            if data["type"] == "chat.chunk":
                print(data["content"], end="", flush=True)
                
                if data["done"]:
                    print("\nComplete!")
                    break

asyncio.run(chat())
`;

/** "Node.js" */
export const NODE_EXAMPLE = String.raw`import WebSocket from 'ws';

const ws = new WebSocket(
  'ws://localhost:18080/v1/ws?apiKey=sk-test-123'
);

ws.on('open', () => {
  console.log('Connected');
  
  ws.send(JSON.stringify({
    type: 'chat.message',
    model: 'gemini-2.5-pro',
    messages: [
      { role: 'user', content: 'Tell me a joke' }
    ],
    stream: true
  }));
});

ws.on('message', (data) => {
  const message = JSON.parse(data);
  
  if (message.type === 'chat.chunk') {
    process.stdout.write(message.content);
    
    if (message.done) {
      console.log('\nComplete!');
      ws.close();
    }
  }
});

ws.on('error', (error) => {
  console.error('WebSocket error:', error);
});

ws.on('close', () => {
  console.log('Disconnected');
});
`;
